#include "engine/cli/flag_ranges.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <optional>

namespace infertune {
namespace {

// CLI11 reads "+5" as 5; so do the checks. Anything else than the whole text being the number is refused.
std::string_view without_plus(std::string_view text) {
  return text.size() > 1 && text.front() == '+' && text[1] != '-' ? text.substr(1) : text;
}

struct ParsedInteger {
  bool is_integer = false;         // the whole text is a decimal integer
  std::optional<long long> value;  // absent when it does not fit in 64 bits
};

ParsedInteger parse_integer(std::string_view text) {
  text = without_plus(text);
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (end != text.data() + text.size() || text.empty()) return {};
  if (ec == std::errc::result_out_of_range) return {.is_integer = true, .value = std::nullopt};
  if (ec != std::errc()) return {};
  return {.is_integer = true, .value = value};
}

std::optional<double> parse_real(std::string_view text) {
  text = without_plus(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string with_note(std::string text, const std::string& note) {
  return note.empty() ? text : fmt::format("{} ({})", text, note);
}

}  // namespace

bool IntRange::allows(long long value) const {
  if (value >= low && value <= high) return true;
  for (const SpecialValue& s : special) {
    if (s.value == value) return true;
  }
  return false;
}

std::string IntRange::describe() const {
  std::string range;
  if (low == high) {
    range = fmt::format("{}", low);
  } else if (high >= std::numeric_limits<int>::max()) {
    range = fmt::format(">= {}", low);
  } else {
    range = fmt::format("{}..{}", low, high);
  }
  std::string specials;
  for (const SpecialValue& s : special) {
    specials += fmt::format("{}{} ({})", specials.empty() ? "" : ", ", s.value, s.meaning);
  }
  range = with_note(std::move(range), note);
  return specials.empty() ? range : specials + " or " + range;
}

bool RealRange::allows(double value) const {
  if (!std::isfinite(value)) return false;
  const bool above_low = low_open ? value > low : value >= low;
  const bool below_high = high_open ? value < high : value <= high;
  return above_low && below_high;
}

std::string RealRange::describe() const {
  const bool has_low = std::isfinite(low);
  const bool has_high = std::isfinite(high);
  std::string range;
  if (has_low && has_high) {
    range = fmt::format("{}{}, {}{}", low_open ? '(' : '[', low, high, high_open ? ')' : ']');
  } else if (has_low) {
    range = fmt::format("{} {}", low_open ? ">" : ">=", low);
  } else if (has_high) {
    range = fmt::format("{} {}", high_open ? "<" : "<=", high);
  } else {
    range = "any finite number";
  }
  return with_note(std::move(range), note);
}

std::string out_of_range_message(std::string_view value, const std::string& allowed, std::string_view flag) {
  const std::string message = fmt::format("{} is out of range; allowed: {}", value, allowed);
  return flag.empty() ? message : fmt::format("{}: {}", flag, message);
}

Result<long long> parse_int_in_range(std::string_view text, const IntRange& range) {
  const ParsedInteger parsed = parse_integer(text);
  if (!parsed.is_integer) return fail("'{}' is not a whole number; allowed: {}", text, range.describe());
  if (!parsed.value || !range.allows(*parsed.value)) return fail("{}", out_of_range_message(text, range.describe()));
  return *parsed.value;
}

CLI::Validator int_flag_range(IntRange range) {
  const std::string allowed = range.describe();
  return CLI::Validator(
      [range = std::move(range)](std::string& text) {
        auto value = parse_int_in_range(text, range);
        if (!value) return value.error().message;
        text = std::to_string(*value);
        return std::string();
      },
      allowed);
}

CLI::Validator real_flag_range(RealRange range) {
  const std::string allowed = range.describe();
  return CLI::Validator(
      [range = std::move(range), allowed](std::string& text) {
        const std::optional<double> value = parse_real(text);
        if (!value) return fmt::format("'{}' is not a number; allowed: {}", text, allowed);
        if (!range.allows(*value)) return out_of_range_message(text, allowed);
        return std::string();
      },
      allowed);
}

}  // namespace infertune
