#pragma once
// The subcommands owned by sweeps/: export, sweep (and later recommend).
#include "engine/cli/subcommands.h"

namespace infertune {

void add_export_command(Subcommands& commands);
void add_sweep_command(Subcommands& commands);  // sweeps/plan/sweep_command.cpp

inline void register_sweeps_commands(Subcommands& commands) {
  add_export_command(commands);
  add_sweep_command(commands);
}

}  // namespace infertune
