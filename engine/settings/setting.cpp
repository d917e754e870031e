#include "engine/settings/setting.h"

#include <fmt/format.h>

namespace infertune {

std::string_view command_name(Command command) {
  switch (command) {
    case Command::run:
      return "run";
    case Command::bench:
      return "bench";
    case Command::batched_bench:
      return "batched-bench";
    case Command::sweep:
      return "sweep";
    case Command::serve:
      break;
  }
  return "serve";
}

std::string Setting::flag_names() const {
  return short_flag.empty() ? std::string(long_flag) : fmt::format("{}, {}", short_flag, long_flag);
}

Result<std::string> Setting::parse(std::string_view text) const { return parse(text, shown_flag()); }

Result<std::string> Setting::parse(std::string_view text, std::string_view where) const {
  auto value = canonical(text);
  if (!value) return fail("{}: {}", where, value.error().message);
  return value;
}

}  // namespace infertune
