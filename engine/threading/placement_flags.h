#pragma once
// The thread and placement flags of `run`, `serve`, the benchmarks and the sweeps, with llama.cpp's names,
// meanings and defaults (see placement_options.h): -t/--threads, -tb/--threads-batch, -C/--cpu-mask,
// --cpu-strict, --numa, --prio, --poll. CLI11 checks the syntax and ranges it can (the errors name the
// flag); plan_placement checks the rest against the topology.
//
// "-tb" reaches CLI11 only as "--threads-batch": pass the command line through
// rewrite_flag_aliases(args, placement_flag_aliases()) first (engine/threading/flag_aliases.h).
#include <CLI/CLI.hpp>

#include <span>

#include "engine/threading/flag_aliases.h"
#include "engine/threading/placement_options.h"

namespace infertune {

// `options` must outlive the parse of `command`; the defaults shown are its values at the call.
void add_placement_flags(CLI::App& command, PlacementOptions& options);

// {"-tb", "--threads-batch"}
std::span<const FlagAlias> placement_flag_aliases();

}  // namespace infertune
