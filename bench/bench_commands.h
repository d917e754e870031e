#pragma once
// The subcommands owned by bench/: probe, bench, batched-bench (and later loadgen).
#include <span>

#include "engine/cli/subcommands.h"
#include "engine/cli/flag_aliases.h"

namespace infertune {

void add_probe_command(Subcommands& commands);
void add_bench_command(Subcommands& commands);          // bench/llama_bench/bench_command.cpp
void add_batched_bench_command(Subcommands& commands);  // bench/batched_bench/batched_command.cpp

inline void register_bench_commands(Subcommands& commands) {
  add_probe_command(commands);
  add_bench_command(commands);
  add_batched_bench_command(commands);
}

// llama-bench's multi-letter short flags (-pg, -ub, -ngl, -ctk, -ctv, -fa, -mmp), rewritten to their long
// forms before parsing (bench/llama_bench/bench_flags.cpp).
std::span<const FlagAlias> bench_flag_aliases();

// batched-bench's -npp, -ntg, -npl (bench/batched_bench/batched_params.cpp).
std::span<const FlagAlias> batched_flag_aliases();

}  // namespace infertune
