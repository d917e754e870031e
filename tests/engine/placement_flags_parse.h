#pragma once
// Parses placement flags as the dispatcher does: the alias rewrite, then CLI11 (which takes the arguments
// reversed), with -C checked against the given machine. Returns CLI11's message, "" when parsing succeeded.
#include <algorithm>
#include <string>
#include <vector>

#include "engine/threading/placement_flags.h"

namespace infertune::test {

inline std::string parse_placement_flags(PlacementOptions& options, std::vector<std::string> args,
                                         MachineCpus machine) {
  CLI::App app("test");
  add_placement_flags(app, options, std::move(machine));
  rewrite_flag_aliases(args, placement_flag_aliases());
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

}  // namespace infertune::test
