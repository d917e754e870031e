#pragma once
// How each area adds its subcommands to the single `infertune` binary. An area registers a name, a
// description, its flags (on the returned CLI::App) and an action; sweeps/main.cpp parses the command line
// and runs the action of the chosen subcommand, whose return value is the process exit code.
#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/cli/flag_aliases.h"

namespace infertune {

class Subcommands {
 public:
  using Action = std::function<int()>;

  explicit Subcommands(CLI::App& app) : app_(app) {}

  CLI::App* add(const std::string& name, const std::string& description, Action action);

  // The multi-letter short flags `name` accepts (llama.cpp's -tb, -ngl, ...), rewritten to their long forms
  // before CLI11 parses, for that subcommand only.
  void add_aliases(const std::string& name, std::vector<FlagAlias> aliases);

  // Rewrites the aliases of the subcommand named in `args` (the first argument naming one), in the arguments
  // after it.
  void rewrite_aliases(std::vector<std::string>& args) const;

  // The action of the subcommand that was parsed, or null when none was given.
  const Action& chosen() const { return chosen_; }

 private:
  CLI::App& app_;
  Action chosen_;
  std::map<std::string, std::vector<FlagAlias>> aliases_;
};

// Prints "infertune <command>: <message>" to stderr and returns exit code 1 (bad input or failure).
int report_error(const std::string& command, const std::string& message);

}  // namespace infertune
