#include "engine/grammar/json_schema_gbnf.h"

#include <fmt/format.h>

#include <map>

#include "engine/tokenizer/utf8.h"

namespace infertune {
namespace {

// Grammar::parse refuses repetition counts above this.
constexpr uint64_t kMaxRepeat = 10000;
// Counts above kMaxRepeat repeat blocks of this many.
constexpr uint64_t kBlock = 1000;
// Longer keys would nest a group per character in gbnf_key_other_than's text.
constexpr size_t kMaxKeyLength = 256;

// fmt rather than "(" + text + ")", which GCC 12 at -O3 warns about (a false -Wrestrict).
std::string parenthesized(std::string_view text) { return fmt::format("({})", text); }

// item{min,max} with both counts within kMaxRepeat, in its shortest spelling.
std::string counted(const std::string& item, uint64_t min, std::optional<uint64_t> max) {
  if (max == 0u) return "";
  if (!max) return min == 0 ? item + "*" : min == 1 ? item + "+" : fmt::format("{}{{{},}}", item, min);
  if (min == *max) return min == 1 ? item : fmt::format("{}{{{}}}", item, min);
  if (min == 0 && *max == 1) return item + "?";
  return fmt::format("{}{{{},{}}}", item, min, *max);
}

std::string exactly(const std::string& item, uint64_t n) {
  if (n <= kMaxRepeat) return counted(item, n, n);
  const std::string block = parenthesized(counted(item, kBlock, kBlock));
  return join_nonempty({counted(block, n / kBlock, n / kBlock), counted(item, n % kBlock, n % kBlock)}, " ");
}

// Up to n copies, split so that each count has one reading: under n / kBlock whole blocks and then less than a
// block, or all of those blocks and then at most the rest.
std::string at_most(const std::string& item, uint64_t n) {
  if (n <= kMaxRepeat) return counted(item, 0, n);
  const std::string block = parenthesized(counted(item, kBlock, kBlock));
  const uint64_t blocks = n / kBlock;
  return fmt::format("({} {} | {})", counted(block, 0, blocks - 1), counted(item, 0, kBlock - 1),
                     join_nonempty({counted(block, blocks, blocks), counted(item, 0, n % kBlock)}, " "));
}

std::string digit_class(char first, char last) {
  return first == last ? fmt::format("\"{}\"", first) : fmt::format("[{}-{}]", first, last);
}

std::string any_digits(size_t n) { return n == 0 ? "" : n == 1 ? "[0-9]" : fmt::format("[0-9]{{{}}}", n); }

// Digit strings of one length between low and high (same length, low <= high): the common first digit, or the
// edges (low's first digit then anything above low's rest, high's then anything below its rest) and whole
// digits between.
std::string same_length_range(std::string_view low, std::string_view high) {
  if (low.empty()) return "";
  if (low == high) return fmt::format("\"{}\"", low);
  const std::string_view low_rest = low.substr(1), high_rest = high.substr(1);
  if (low[0] == high[0])
    return join_nonempty({digit_class(low[0], low[0]), same_length_range(low_rest, high_rest)}, " ");
  const bool low_from_zero = low_rest.find_first_not_of('0') == std::string_view::npos;
  const bool high_to_nine = high_rest.find_first_not_of('9') == std::string_view::npos;
  std::vector<std::string> alternatives;
  if (!low_from_zero) {
    alternatives.push_back(join_nonempty(
        {digit_class(low[0], low[0]), same_length_range(low_rest, std::string(low_rest.size(), '9'))}, " "));
  }
  const char middle_first = static_cast<char>(low[0] + (low_from_zero ? 0 : 1));
  const char middle_last = static_cast<char>(high[0] - (high_to_nine ? 0 : 1));
  if (middle_first <= middle_last) {
    alternatives.push_back(join_nonempty({digit_class(middle_first, middle_last), any_digits(low_rest.size())}, " "));
  }
  if (!high_to_nine) {
    alternatives.push_back(join_nonempty(
        {digit_class(high[0], high[0]), same_length_range(std::string(high_rest.size(), '0'), high_rest)}, " "));
  }
  return alternatives.size() == 1 ? alternatives[0] : parenthesized(join_nonempty(alternatives, " | "));
}

// The texts of [low, high] (high nullopt: unbounded) for non-negative integers, one length at a time.
std::string non_negative_range(uint64_t low, std::optional<uint64_t> high) {
  const std::string low_text = std::to_string(low);
  std::vector<std::string> alternatives;
  if (!high) {
    alternatives.push_back(same_length_range(low_text, std::string(low_text.size(), '9')));
    alternatives.push_back(fmt::format("[1-9] [0-9]{{{},}}", low_text.size()));
    return join_nonempty(alternatives, " | ");
  }
  const size_t high_length = std::to_string(*high).size();
  uint64_t power = 1;  // 10^(length - 1)
  for (size_t length = 1; length <= high_length; ++length, power *= 10) {
    const uint64_t first = length == 1 ? 0 : power;
    const uint64_t last = power * 10 - 1;  // fits: lengths stop at 19 digits
    if (last < low) continue;
    const uint64_t from = std::max(low, first), to = std::min(*high, last);
    if (from <= to) alternatives.push_back(same_length_range(std::to_string(from), std::to_string(to)));
  }
  return join_nonempty(alternatives, " | ");
}

struct TrieNode {
  bool terminal = false;
  std::map<uint32_t, size_t> children;  // code point -> node
};

// What may follow a prefix of the names: one more character of a name, the closing quote where no name ends,
// or a character no name has here and then anything.
std::string trie_expression(const std::vector<TrieNode>& nodes, size_t node) {
  std::vector<std::string> alternatives;
  std::vector<CodePointRange> elsewhere{{0x00, 0x1F}, {'"', '"'}, {'\\', '\\'}};
  for (const auto& [cp, next] : nodes[node].children) {
    alternatives.push_back(gbnf_literal(json_escaped(cp)) + " " + trie_expression(nodes, next));
    elsewhere.push_back({cp, cp});
  }
  if (!nodes[node].terminal) alternatives.push_back(R"("\"")");
  alternatives.push_back(gbnf_class(elsewhere, true) + R"( char* "\"")");
  return parenthesized(join_nonempty(alternatives, " | "));
}

}  // namespace

std::string json_escaped(uint32_t code_point) {
  switch (code_point) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    default:
      return code_point < 0x20 ? fmt::format("\\u{:04x}", code_point) : utf8_encode(code_point);
  }
}

std::string gbnf_repeat(const std::string& item, uint64_t min, std::optional<uint64_t> max) {
  if (max ? *max <= kMaxRepeat : min <= kMaxRepeat) return counted(item, min, max);
  return join_nonempty({exactly(item, min), max ? at_most(item, *max - min) : item + "*"}, " ");
}

std::string gbnf_integer_range(std::optional<int64_t> low, std::optional<int64_t> high) {
  std::vector<std::string> alternatives;
  if (!high || *high >= 0) {
    alternatives.push_back(non_negative_range(low ? static_cast<uint64_t>(std::max<int64_t>(*low, 0)) : 0,
                                              high ? std::optional<uint64_t>(*high) : std::nullopt));
  }
  if (!low || *low < 0) {  // magnitudes from -min(high, -1) to -low
    const uint64_t least = high && *high < 0 ? static_cast<uint64_t>(-*high) : 1;
    const std::optional<uint64_t> most = low ? std::optional<uint64_t>(-*low) : std::nullopt;
    alternatives.push_back("\"-\" (" + non_negative_range(least, most) + ")");
  }
  return join_nonempty(alternatives, " | ");
}

Result<std::string> gbnf_key_other_than(const std::vector<std::string>& names) {
  std::vector<TrieNode> nodes(1);
  for (const std::string& name : names) {
    const std::vector<uint32_t> cps = code_points(name);
    if (cps.size() > kMaxKeyLength) {
      return fail("property name \"{}...\" is longer than {} characters", name.substr(0, 20), kMaxKeyLength);
    }
    size_t node = 0;
    for (uint32_t cp : cps) {
      const auto [it, added] = nodes[node].children.try_emplace(cp, nodes.size());
      if (added) nodes.emplace_back();
      node = it->second;
    }
    nodes[node].terminal = true;
  }
  return R"("\"" )" + trie_expression(nodes, 0);
}

std::string gbnf_rule_name(std::string_view hint) {
  std::string name;
  bool gap = false;
  for (char c : hint) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!keep) {
      gap = true;
      continue;
    }
    if (gap && !name.empty()) name += '-';
    gap = false;
    name += c;
  }
  return name.empty() ? "rule" : name;
}

std::string join_nonempty(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const std::string& part : parts) {
    if (part.empty()) continue;
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

}  // namespace infertune
