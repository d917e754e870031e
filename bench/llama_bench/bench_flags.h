#pragma once
// The flags of `infertune bench`, with llama-bench's names and defaults: the workload lists (-p, -n, -pg, -d),
// the engine settings bench takes (generated from engine/settings/settings_table.h: comma lists and ranges
// where llama-bench takes lists, value_lists.h), and the run's own flags. CLI11 collects the text and
// resolve_bench_params turns it into a checked BenchParams (errors name the flag).
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "bench/llama_bench/bench_params.h"
#include "bench/llama_bench/llama_bench_only_flags.h"
#include "engine/cli/flag_aliases.h"
#include "engine/settings/setting_flags.h"
#include "kernels/result.h"

namespace infertune {

// Every occurrence of every flag, as given.
struct BenchFlagText {
  std::vector<std::string> models, n_prompt, n_gen, n_pg, n_depth;
  SettingText settings;
  // llama-bench's -nkvo and -lm lists: translated into --kv-offload and -mmp values when resolved.
  std::vector<std::string> no_kv_offload, load_mode;
  int repetitions = 5;
  int delay_seconds = 0;
  bool no_warmup = false;
  bool no_probe = false;
  bool progress = false;
  bool profile = false;
  bool verbose = false;
  bool list_devices = false;
  std::string output = "md";
  std::string output_err;  // -oe: "" is none
  ForeignFlagText llama_bench_only;
};

// `text` must outlive the parse of `command`.
void add_bench_flags(CLI::App& command, BenchFlagText& text);

// Every list element is range-checked (the error names the flag, the value and the range), and every -C mask
// against `machine` (the live one: engine/settings/setting_flags.h).
Result<BenchParams> resolve_bench_params(const BenchFlagText& text, const MachineCpus& machine = this_machine_cpus);

// The multi-letter short flags bench takes (-pg, -nkvo, -lm, -oe, the settings' -ngl, -ub, -ctk, -ctv, -fa, -mmp,
// and llama_bench_only_flags.h's)
// -> their long forms; a command that registers the bench flags registers these with Subcommands::add_aliases.
std::vector<FlagAlias> bench_flag_aliases();

}  // namespace infertune
