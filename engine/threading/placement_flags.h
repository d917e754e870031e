#pragma once
// The thread and placement flags of `run`, `serve`, the benchmarks and the sweeps, with llama.cpp's names,
// meanings and defaults (see placement_options.h): -t/--threads, -tb/--threads-batch, -C/--cpu-mask,
// --cpu-strict, --numa, --prio, --poll. Every value is checked while the command line is parsed, before
// any model is loaded (engine/cli/flag_ranges.h; the errors name the flag, the value and what is allowed):
//   -t    -1 (the default: the number of physical cores) or 1..kMaxThreads. llama.cpp reads any value <= 0
//         as "auto"; here 0 and other negatives are refused as the slips they usually are.
//   -tb   -1 (the default: same as -t) or 1..kMaxThreads.
//   -C    its syntax, and every CPU it names must be one this process may use on this machine (hwloc, as
//         engine/threading sees it): a mask wider than the machine is refused, naming the missing CPUs,
//         rather than silently narrowed.
// plan_placement checks what depends on the other flags (threads against the CPUs left, --numa).
//
// "-tb" reaches CLI11 only as "--threads-batch": pass the command line through
// rewrite_flag_aliases(args, placement_flag_aliases()) first (engine/cli/flag_aliases.h).
#include <CLI/CLI.hpp>

#include <functional>
#include <span>
#include <string_view>

#include "engine/threading/cpu_set.h"
#include "engine/cli/flag_aliases.h"
#include "engine/threading/placement_options.h"
#include "kernels/result.h"

namespace infertune {

// The CPUs a -C mask may name: those of this machine the process may use (hwloc's allowed PUs).
Result<CpuSet> this_machine_cpus();

// Where -C is checked: the live machine, or a fixed set in a test.
using MachineCpus = std::function<Result<CpuSet>()>;

// A -C mask (syntax as parse_cpu_mask) that selects at least one CPU and none outside `machine`; the
// error names the CPUs the machine lacks ("CPUs 2-31 are not on this machine ...").
Status check_cpu_mask_fits(std::string_view mask_text, const CpuSet& machine);

// `options` must outlive the parse of `command`; the defaults shown are its values at the call.
void add_placement_flags(CLI::App& command, PlacementOptions& options, MachineCpus machine = this_machine_cpus);

// {"-tb", "--threads-batch"}
std::span<const FlagAlias> placement_flag_aliases();

}  // namespace infertune
