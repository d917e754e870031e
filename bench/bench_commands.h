#pragma once
// The subcommands owned by bench/: probe, bench, batched-bench, loadgen.
#include "engine/cli/subcommands.h"

namespace infertune {

void add_probe_command(Subcommands& commands);
void add_bench_command(Subcommands& commands);          // bench/llama_bench/bench_command.cpp
void add_batched_bench_command(Subcommands& commands);  // bench/batched_bench/batched_command.cpp
void add_loadgen_command(Subcommands& commands);        // bench/loadgen/loadgen_command.cpp

inline void register_bench_commands(Subcommands& commands) {
  add_probe_command(commands);
  add_bench_command(commands);
  add_batched_bench_command(commands);
  add_loadgen_command(commands);
}

}  // namespace infertune
