#pragma once
// The subcommands owned by reports/: report, compare, history. Each only reads results stores
// (ResultsStore::open_read_only); compare --bin also runs two infertune binaries.
#include "engine/cli/subcommands.h"

namespace infertune {

void add_report_command(Subcommands& commands);   // reports/report/report_command.cpp
void add_compare_command(Subcommands& commands);  // reports/compare/compare_command.cpp
void add_history_command(Subcommands& commands);  // reports/history/history_command.cpp

inline void register_reports_commands(Subcommands& commands) {
  add_report_command(commands);
  add_compare_command(commands);
  add_history_command(commands);
}

}  // namespace infertune
