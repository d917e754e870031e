#pragma once
// The subcommands owned by bench/: probe, bench, batched-bench. (loadgen's runner is bench/loadgen; its command,
// which can write the results store, is sweeps/cli/loadgen_command.cpp.)
#include "engine/cli/subcommands.h"

namespace infertune {

void add_probe_command(Subcommands& commands);
void add_bench_command(Subcommands& commands);          // bench/llama_bench/bench_command.cpp
void add_batched_bench_command(Subcommands& commands);  // bench/batched_bench/batched_command.cpp

inline void register_bench_commands(Subcommands& commands) {
  add_probe_command(commands);
  add_bench_command(commands);
  add_batched_bench_command(commands);
}

}  // namespace infertune
