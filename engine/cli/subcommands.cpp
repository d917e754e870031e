#include "engine/cli/subcommands.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace infertune {

CLI::App* Subcommands::add(const std::string& name, const std::string& description, Action action) {
  CLI::App* sub = app_.add_subcommand(name, description);
  sub->callback([this, action = std::move(action)] { chosen_ = action; });
  return sub;
}

void Subcommands::add_aliases(const std::string& name, std::vector<FlagAlias> aliases) {
  auto& list = aliases_[name];
  list.insert(list.end(), aliases.begin(), aliases.end());
}

void Subcommands::rewrite_aliases(std::vector<std::string>& args) const {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") return;
    auto it = aliases_.find(args[i]);
    if (it == aliases_.end()) continue;
    std::vector<std::string> rest(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
    rewrite_flag_aliases(rest, it->second);
    std::copy(rest.begin(), rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    return;
  }
}

int report_error(const std::string& command, const std::string& message) {
  fmt::print(stderr, "infertune {}: {}\n", command, message);
  return 1;
}

}  // namespace infertune
