#include "engine/settings/value_lists.h"

#include <fmt/format.h>

#include <charconv>
#include <limits>

#include "engine/cli/flag_ranges.h"

namespace infertune {
namespace {

// Reads a decimal integer at the front of `text` and advances past it. A leading '-' only when allowed.
Result<long long> take_integer(std::string_view& text, bool allow_negative, std::string_view flag,
                               std::string_view item) {
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (!allow_negative && begin != end && *begin == '-') return fail("{}", out_of_range_message(item, ">= 0", flag));
  long long value = 0;
  auto [next, ec] = std::from_chars(begin, end, value);
  if (ec == std::errc::result_out_of_range) return fail("{}: '{}' is out of range", flag, item);
  if (ec != std::errc() || next == begin) {
    return fail("{}: '{}' is not an integer or range (first-last, first-last+step, first-last*mult)", flag, item);
  }
  if (value > std::numeric_limits<int>::max() || value < std::numeric_limits<int>::min()) {
    return fail("{}: '{}' is out of range", flag, item);
  }
  text.remove_prefix(static_cast<size_t>(next - begin));
  return value;
}

// Several ranges, or the same range given again and again, add up: the cap is on the flag's whole list.
Status too_many_values(std::string_view flag, std::string_view item) {
  return fail("{}: the values expand to more than {} in all (at '{}')", flag, kMaxRangeValues, item);
}

// One item: "N", "first-last", "first-last+step" or "first-last*mult", appended to `out`.
Status expand_item(std::string_view item, std::string_view flag, bool allow_negative, std::vector<int>& out) {
  std::string_view rest = item;
  auto first = take_integer(rest, allow_negative, flag, item);
  if (!first) return first.error();
  if (rest.empty()) {
    if (out.size() == kMaxRangeValues) return too_many_values(flag, item);
    out.push_back(static_cast<int>(*first));
    return {};
  }
  if (rest.front() != '-') return fail("{}: unexpected '{}' in '{}'", flag, rest, item);
  rest.remove_prefix(1);
  auto last = take_integer(rest, false, flag, item);
  if (!last) return last.error();
  char op = '+';
  long long step = 1;
  if (!rest.empty()) {
    op = rest.front();
    if (op != '+' && op != '*') return fail("{}: unexpected '{}' in '{}' (a step is +N or *N)", flag, rest, item);
    rest.remove_prefix(1);
    auto parsed = take_integer(rest, false, flag, item);
    if (!parsed) return parsed.error();
    if (!rest.empty()) return fail("{}: unexpected '{}' in '{}'", flag, rest, item);
    step = *parsed;
  }
  if (*last < *first) return fail("{}: the range '{}' is empty (last < first)", flag, item);
  // A step that does not move forward would never reach `last`: llama-bench rejects it too.
  if ((op == '+' && step < 1) || (op == '*' && (step < 2 || *first < 1))) {
    return fail("{}: the range '{}' never advances (use +N with N >= 1, or *N with N >= 2 from a first value >= 1)",
                flag, item);
  }
  size_t count = 0;
  for (long long value = *first; value <= *last; value = op == '+' ? value + step : value * step) {
    if (++count > kMaxRangeValues)
      return fail("{}: the range '{}' has more than {} values", flag, item, kMaxRangeValues);
    if (out.size() == kMaxRangeValues) return too_many_values(flag, item);
    out.push_back(static_cast<int>(value));
  }
  return {};
}

}  // namespace

Result<std::vector<std::string>> split_list(std::string_view text, std::string_view flag) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view item = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    if (item.empty()) return fail("{}: empty value in '{}'", flag, text);
    items.emplace_back(item);
    if (comma == std::string_view::npos) return items;
    start = comma + 1;
  }
}

Result<std::vector<int>> parse_int_list(const std::vector<std::string>& occurrences, std::string_view flag,
                                        bool allow_negative) {
  std::vector<int> values;
  for (const std::string& occurrence : occurrences) {
    auto items = split_list(occurrence, flag);
    if (!items) return items.error();
    for (const std::string& item : *items) {
      if (Status s = expand_item(item, flag, allow_negative, values); !s) return s.error();
    }
  }
  return values;
}

Result<std::vector<int>> parse_int_list(const std::vector<std::string>& occurrences, std::string_view flag,
                                        const IntRange& allowed) {
  // Negative items are read even when none is allowed, so that "-3" gets the message with the whole range.
  auto values = parse_int_list(occurrences, flag, true);
  if (!values) return values.error();
  for (int v : *values) {
    if (!allowed.allows(v)) return fail("{}", out_of_range_message(std::to_string(v), allowed.describe(), flag));
  }
  return values;
}

Result<std::vector<std::string>> parse_word_list(const std::vector<std::string>& occurrences, std::string_view flag) {
  std::vector<std::string> values;
  for (const std::string& occurrence : occurrences) {
    auto items = split_list(occurrence, flag);
    if (!items) return items.error();
    values.insert(values.end(), items->begin(), items->end());
  }
  return values;
}

Result<std::vector<bool>> parse_bool_list(const std::vector<std::string>& occurrences, std::string_view flag) {
  auto words = parse_word_list(occurrences, flag);
  if (!words) return words.error();
  std::vector<bool> values;
  for (const std::string& word : *words) {
    if (word == "1" || word == "true") {
      values.push_back(true);
    } else if (word == "0" || word == "false") {
      values.push_back(false);
    } else {
      return fail("{}: '{}' is not 0 or 1", flag, word);
    }
  }
  return values;
}

Result<std::vector<std::pair<int, int>>> parse_pair_list(const std::vector<std::string>& occurrences,
                                                         std::string_view flag) {
  std::vector<std::pair<int, int>> pairs;
  for (const std::string& occurrence : occurrences) {
    auto items = split_list(occurrence, flag);
    if (!items) return items.error();
    if (items->size() != 2) return fail("{}: '{}' is not a pair pp,tg", flag, occurrence);
    std::pair<int, int> pair;
    for (int i = 0; i < 2; ++i) {
      std::string_view text = (*items)[i];
      auto value = take_integer(text, false, flag, occurrence);
      if (!value) return value.error();
      if (!text.empty()) return fail("{}: '{}' is not a pair of counts pp,tg", flag, occurrence);
      (i == 0 ? pair.first : pair.second) = static_cast<int>(*value);
    }
    pairs.push_back(pair);
  }
  return pairs;
}

}  // namespace infertune
