#include "engine/cli/subcommands.h"

#include <fmt/format.h>

#include <cstdio>

namespace infertune {

CLI::App* Subcommands::add(const std::string& name, const std::string& description, Action action) {
  CLI::App* sub = app_.add_subcommand(name, description);
  sub->callback([this, action = std::move(action)] { chosen_ = action; });
  return sub;
}

int report_error(const std::string& command, const std::string& message) {
  fmt::print(stderr, "infertune {}: {}\n", command, message);
  return 1;
}

}  // namespace infertune
