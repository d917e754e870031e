#pragma once
// The subcommands owned by bench/: probe (and later bench, batched-bench, loadgen).
#include "engine/cli/subcommands.h"

namespace infertune {

void add_probe_command(Subcommands& commands);

inline void register_bench_commands(Subcommands& commands) { add_probe_command(commands); }

}  // namespace infertune
