#include "engine/cli/foreign_flags.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "engine/settings/value_lists.h"

namespace infertune {
namespace {

bool is_short_form(std::string_view alias) { return !alias.starts_with("--"); }

// "-sp (--special)" or "--webui": the form the tool's users type first.
std::string spelled(const ForeignFlag& flag) {
  return flag.aliases.empty() || !is_short_form(flag.aliases.front())
             ? std::string(flag.name)
             : fmt::format("{} ({})", flag.aliases.front(), flag.name);
}

std::string with_instead(const ForeignFlag& flag) {
  return flag.instead.empty() ? std::string(flag.asks_for) : fmt::format("{} ({})", flag.asks_for, flag.instead);
}

// CLI11 lists the long names itself; the short forms open the help, as the settings' do ("-cb: ...").
std::string help_of(const ForeignFlag& flag, const ForeignFlagTable& table) {
  std::vector<std::string_view> short_forms;
  for (std::string_view alias : flag.aliases) {
    if (is_short_form(alias)) short_forms.push_back(alias);
  }
  const std::string lead = short_forms.empty() ? "" : fmt::format("{}: ", fmt::join(short_forms, ", "));
  if (flag.switch_taken) return fmt::format("{}Taken: {}", lead, flag.instead);
  if (!flag.taken_values.empty()) {
    return fmt::format("{}Only {} ({}'s default): {} is not supported{}", lead, fmt::join(flag.taken_values, ","),
                       table.tool, flag.asks_for, flag.instead.empty() ? "" : fmt::format("; {}", flag.instead));
  }
  return fmt::format("{}Not supported: {}", lead, with_instead(flag));
}

Status check_values(const ForeignFlag& flag, const ForeignFlagTable& table, const std::vector<std::string>& given) {
  auto values = parse_word_list(given, spelled(flag));
  if (!values) return values.error();
  for (const std::string& value : *values) {
    if (std::ranges::find(flag.taken_values, value) != flag.taken_values.end()) continue;
    const std::string only = flag.taken_values.empty() ? std::string()
                                                       : fmt::format("; only {}'s default, {}, is taken", table.tool,
                                                                     fmt::join(flag.taken_values, ","));
    return fail("{} {}: infertune {} does not support {}{}", spelled(flag), value, table.command, with_instead(flag),
                only);
  }
  return {};
}

}  // namespace

ForeignFlag taken_switch(std::string_view name, std::vector<std::string_view> aliases, std::string_view asks_for,
                         std::string_view what_infertune_does) {
  return {.name = name,
          .aliases = std::move(aliases),
          .asks_for = asks_for,
          .instead = what_infertune_does,
          .switch_taken = true};
}

ForeignFlag refused_switch(std::string_view name, std::vector<std::string_view> aliases, std::string_view asks_for,
                           std::string_view instead) {
  return {.name = name, .aliases = std::move(aliases), .asks_for = asks_for, .instead = instead};
}

ForeignFlag value_flag(std::string_view name, std::vector<std::string_view> aliases, std::string_view asks_for,
                       std::vector<std::string_view> taken_values, std::string_view instead) {
  return {.name = name,
          .aliases = std::move(aliases),
          .asks_for = asks_for,
          .instead = instead,
          .takes_value = true,
          .taken_values = std::move(taken_values)};
}

ForeignFlag refused_value_flag(std::string_view name, std::vector<std::string_view> aliases, std::string_view asks_for,
                               std::string_view instead) {
  return value_flag(name, std::move(aliases), asks_for, {}, instead);
}

void add_foreign_flags(CLI::App& app, const ForeignFlagTable& table, ForeignFlagText& text) {
  for (const ForeignFlag& flag : table.flags) {
    std::string names(flag.name);
    for (std::string_view alias : flag.aliases) {
      if (!is_short_form(alias)) names += "," + std::string(alias);
    }
    const std::string help = help_of(flag, table);
    CLI::Option* option = flag.takes_value ? app.add_option(names, text.values[std::string(flag.name)], help)
                                                 ->expected(1)
                                                 ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                                           : app.add_flag(names, text.switches[std::string(flag.name)], help);
    option->group(std::string(table.group));
  }
}

Status check_foreign_flags(const ForeignFlagTable& table, const ForeignFlagText& text) {
  for (const ForeignFlag& flag : table.flags) {
    const std::string name(flag.name);
    if (flag.takes_value) {
      const auto given = text.values.find(name);
      if (given == text.values.end() || given->second.empty()) continue;
      if (Status s = check_values(flag, table, given->second); !s) return s;
    } else {
      const auto given = text.switches.find(name);
      if (given == text.switches.end() || !given->second || flag.switch_taken) continue;
      return fail("{}: infertune {} does not support {}", spelled(flag), table.command, with_instead(flag));
    }
  }
  return {};
}

std::vector<FlagAlias> foreign_flag_aliases(const ForeignFlagTable& table) {
  std::vector<FlagAlias> aliases;
  for (const ForeignFlag& flag : table.flags) {
    for (std::string_view alias : flag.aliases) {
      if (is_short_form(alias)) aliases.push_back({alias, flag.name});
    }
  }
  return aliases;
}

}  // namespace infertune
