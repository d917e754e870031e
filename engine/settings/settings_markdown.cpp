#include "engine/settings/settings_markdown.h"

#include <fmt/format.h>

#include <array>

#include "engine/settings/settings_table.h"

namespace infertune {
namespace {

// The commands that exist today (serve is in the table for the server to come).
constexpr std::array kShownCommands{Command::run, Command::bench, Command::batched_bench, Command::sweep};

std::string how_taken(const Setting& s, Command command) {
  if (!s.taken_by(command)) return "";
  if (s.as_switch(command)) return fmt::format("`{}`", s.switch_flag);
  return s.takes_list(command) ? "list" : "one";
}

std::string flags_cell(const Setting& s) {
  std::string cell =
      s.short_flag.empty() ? fmt::format("`{}`", s.long_flag) : fmt::format("`{}`, `{}`", s.short_flag, s.long_flag);
  if (!s.switch_flag.empty()) cell += fmt::format(", `{}`", s.switch_flag);
  return cell;
}

}  // namespace

std::string settings_markdown() {
  std::string out = "| setting | flags | llama.cpp | values | default |";
  std::string rule = "|---|---|---|---|---|";
  for (Command c : kShownCommands) {
    out += fmt::format(" {} |", command_name(c));
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  for (const Setting& s : all_settings()) {
    out += fmt::format("| `{}` | {} | `{}` | {} | `{}` |", s.key, flags_cell(s), s.llama_flag, s.allowed(),
                       s.default_value);
    for (Command c : kShownCommands) out += fmt::format(" {} |", how_taken(s, c));
    out += "\n";
  }
  return out;
}

}  // namespace infertune
