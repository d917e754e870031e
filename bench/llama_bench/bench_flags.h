#pragma once
// The flags of `infertune bench`, with llama-bench's names and defaults. Test parameters take comma lists
// and ranges (value_lists.h) and may be repeated; CLI11 collects their text and resolve_bench_params
// turns it into a checked BenchParams (errors name the flag).
//
// llama-bench's multi-letter short flags reach CLI11 as their long forms: pass the command line through
// rewrite_flag_aliases(args, bench_flag_aliases()) first (engine/cli/flag_aliases.h).
#include <CLI/CLI.hpp>

#include <span>
#include <string>
#include <vector>

#include "bench/llama_bench/bench_params.h"
#include "engine/cli/flag_aliases.h"
#include "engine/threading/placement_flags.h"
#include "kernels/result.h"

namespace infertune {

// Every occurrence of every flag, as given.
struct BenchFlagText {
  std::vector<std::string> models, n_prompt, n_gen, n_pg, n_depth, n_batch, n_ubatch, type_k, type_v, n_threads,
      cpu_mask, cpu_strict, poll, n_gpu_layers, flash_attn, use_mmap;
  std::string numa;
  int priority = 0;
  int repetitions = 5;
  int delay_seconds = 0;
  bool no_warmup = false;
  bool no_probe = false;
  bool progress = false;
  std::string output = "md";
};

// `text` must outlive the parse of `command`.
void add_bench_flags(CLI::App& command, BenchFlagText& text);

// Every list element is range-checked (the error names the flag, the value and the range), and every -C mask
// against `machine` (the live one: engine/threading/placement_flags.h).
Result<BenchParams> resolve_bench_params(const BenchFlagText& text, const MachineCpus& machine = this_machine_cpus);

// -pg, -ub, -ngl, -ctk, -ctv, -fa, -mmp -> their long forms.
std::span<const FlagAlias> bench_flag_aliases();

}  // namespace infertune
