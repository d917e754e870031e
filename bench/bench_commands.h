#pragma once
// The subcommands owned by bench/: probe, bench (and later batched-bench, loadgen).
#include <span>

#include "engine/cli/subcommands.h"
#include "engine/threading/flag_aliases.h"

namespace infertune {

void add_probe_command(Subcommands& commands);
void add_bench_command(Subcommands& commands);  // bench/llama_bench/bench_command.cpp

inline void register_bench_commands(Subcommands& commands) {
  add_probe_command(commands);
  add_bench_command(commands);
}

// llama-bench's multi-letter short flags (-pg, -ub, -ngl, -ctk, -ctv, -fa, -mmp), rewritten to their long
// forms before parsing (bench/llama_bench/bench_flags.cpp).
std::span<const FlagAlias> bench_flag_aliases();

}  // namespace infertune
