#include "engine/run/token_list.h"

#include <charconv>

namespace infertune {
namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace

Result<std::vector<int32_t>> parse_token_list(std::string_view text) {
  std::vector<int32_t> ids;
  size_t index = 0;
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    int32_t id = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
    if (item.empty()) return fail("token list item {} is empty", index + 1);
    if (ec != std::errc() || end != item.data() + item.size()) {
      return fail("token list item {} ('{}') is not a token id", index + 1, item);
    }
    if (id < 0) return fail("token list item {} ({}) is negative", index + 1, id);
    ids.push_back(id);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    ++index;
  }
  return ids;
}

}  // namespace infertune
