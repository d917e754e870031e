#pragma once
// The subcommands owned by sweeps/: export (and later sweep, recommend).
#include "engine/cli/subcommands.h"

namespace infertune {

void add_export_command(Subcommands& commands);

inline void register_sweeps_commands(Subcommands& commands) { add_export_command(commands); }

}  // namespace infertune
