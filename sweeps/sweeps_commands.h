#pragma once
// The subcommands owned by sweeps/: export, sweep, merge, recommend, loadgen.
#include "engine/cli/subcommands.h"

namespace infertune {

void add_export_command(Subcommands& commands);
void add_sweep_command(Subcommands& commands);         // sweeps/cli/sweep_command.cpp
void add_merge_command(Subcommands& commands);         // sweeps/cli/merge_command.cpp
void add_recommend_command(Subcommands& commands);     // sweeps/recommend/recommend_command.cpp
void add_sweep_worker_command(Subcommands& commands);  // sweeps/run/worker_command.cpp (internal, hidden)
void add_loadgen_command(Subcommands& commands);       // sweeps/cli/loadgen_command.cpp

inline void register_sweeps_commands(Subcommands& commands) {
  add_export_command(commands);
  add_sweep_command(commands);
  add_sweep_worker_command(commands);
  add_merge_command(commands);
  add_recommend_command(commands);
  add_loadgen_command(commands);
}

}  // namespace infertune
