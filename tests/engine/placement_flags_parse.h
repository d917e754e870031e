#pragma once
// Parses the placement settings of `run` as the dispatcher does: the command's alias rewrite, then CLI11
// (which takes the arguments reversed), with -C checked against the given machine. Returns CLI11's message,
// "" when parsing succeeded; `options` receives the placement parsed.
#include <algorithm>
#include <string>
#include <vector>

#include "engine/settings/setting_flags.h"

namespace infertune::test {

inline std::string parse_placement_flags(PlacementOptions& options, std::vector<std::string> args,
                                         MachineCpus machine) {
  CLI::App app("test");
  EngineSettings settings;
  settings.placement = options;
  add_setting_flags(app, Command::run, settings, std::move(machine));
  rewrite_flag_aliases(args, setting_flag_aliases(Command::run));
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  options = settings.placement;
  return "";
}

}  // namespace infertune::test
