#include "engine/grammar/gbnf_syntax.h"

#include <fmt/format.h>

#include <optional>

#include "engine/tokenizer/utf8.h"

namespace infertune {
namespace {

// Repetition counts above this are refused: {m,n} is compiled into m + n copies of its item.
constexpr uint32_t kMaxRepetition = 10000;

// As llama.cpp's: no '_', which the rules made for groups and repetitions use ("root_1"), so they never collide
// with a rule of the grammar.
bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

// A cursor over the text that knows its line and column; every error it makes names them.
class GbnfReader {
 public:
  explicit GbnfReader(std::string_view text) : text_(text) {}

  Result<std::vector<GbnfRule>> rules() {
    std::vector<GbnfRule> rules;
    skip_space(true);
    while (!at_end()) {
      auto rule = parse_rule();
      if (!rule) return rule.error();
      rules.push_back(std::move(*rule));
      skip_space(true);
    }
    return rules;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  SourcePosition here() const { return {.line = line_, .column = static_cast<uint32_t>(pos_ - line_start_ + 1)}; }

  void advance(size_t n = 1) {
    for (size_t i = 0; i < n && !at_end(); ++i, ++pos_) {
      if (text_[pos_] == '\n') {
        ++line_;
        line_start_ = pos_ + 1;
      }
    }
  }

  template <class... Args>
  Error error_here(fmt::format_string<Args...> format, Args&&... args) const {
    const SourcePosition at = here();
    return fail("grammar line {}, column {}: {}", at.line, at.column, fmt::format(format, std::forward<Args>(args)...));
  }

  // Spaces, tabs and comments; newlines too where a rule cannot end (inside parentheses, after '|' or '::=').
  void skip_space(bool newlines) {
    while (!at_end()) {
      const char c = peek();
      if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
        advance();
      } else if (c == '#') {
        while (!at_end() && peek() != '\n') advance();
      } else {
        return;
      }
    }
  }

  Result<std::string> parse_name(std::string_view what) {
    const size_t start = pos_;
    while (!at_end() && is_name_char(peek())) advance();
    if (pos_ == start) {
      return at_end() ? error_here("expected {}, found the end of the grammar", what)
                      : error_here("expected {}, found '{}'", what, peek());
    }
    if (peek() == '_') return error_here("rule names are letters, digits and '-' ('_' is not allowed)");
    return std::string(text_.substr(start, pos_ - start));
  }

  Result<GbnfRule> parse_rule() {
    GbnfRule rule{.position = here()};
    auto name = parse_name("a rule name");
    if (!name) return name.error();
    rule.name = std::move(*name);
    skip_space(false);
    if (text_.substr(pos_, 3) != "::=") return error_here("expected '::=' after the rule name '{}'", rule.name);
    advance(3);
    skip_space(true);
    auto alternatives = parse_alternatives(false);
    if (!alternatives) return alternatives.error();
    rule.alternatives = std::move(*alternatives);
    if (!at_end() && peek() != '\n' && peek() != '\r') {
      return error_here("expected the end of rule '{}', found '{}'", rule.name, peek());
    }
    return rule;
  }

  Result<std::vector<GbnfSequence>> parse_alternatives(bool nested) {
    std::vector<GbnfSequence> alternatives;
    for (;;) {
      auto sequence = parse_sequence(nested);
      if (!sequence) return sequence.error();
      alternatives.push_back(std::move(*sequence));
      if (peek() != '|') return alternatives;
      advance();
      skip_space(true);
    }
  }

  bool ends_sequence(bool nested) const {
    const char c = peek();
    return at_end() || c == '|' || c == ')' || (!nested && (c == '\n' || c == '\r'));
  }

  Result<GbnfSequence> parse_sequence(bool nested) {
    GbnfSequence sequence;
    while (!ends_sequence(nested)) {
      auto item = parse_item(nested);
      if (!item) return item.error();
      if (Status st = parse_repetition(*item); !st) return st.error();
      sequence.items.push_back(std::move(*item));
      skip_space(nested);
    }
    if (nested && at_end()) return error_here("expected ')' before the end of the grammar");
    return sequence;
  }

  Result<GbnfItem> parse_item(bool nested) {
    GbnfItem item{.position = here()};
    const char c = peek();
    if (c == '"') return parse_literal(std::move(item));
    if (c == '[') return parse_class(std::move(item));
    if (c == '.') {
      advance();
      item.kind = GbnfItem::Kind::Chars;
      item.negated = true;
      return item;
    }
    if (c == '(') {
      advance();
      skip_space(true);
      auto alternatives = parse_alternatives(true);
      if (!alternatives) return alternatives.error();
      if (peek() != ')') return error_here("expected ')' to close the group opened at column {}", item.position.column);
      advance();
      item.kind = GbnfItem::Kind::Group;
      item.alternatives = std::move(*alternatives);
      return item;
    }
    if (is_name_char(c)) {
      auto name = parse_name("a rule name");
      if (!name) return name.error();
      skip_space(nested);
      if (text_.substr(pos_, 3) == "::=") {
        return error_here("'{}' starts a new rule on the line of the last one; rules end at a newline", *name);
      }
      item.kind = GbnfItem::Kind::RuleRef;
      item.name = std::move(*name);
      return item;
    }
    return error_here("expected a literal \"...\", a class [...], '.', a rule name or '(', found '{}'", c);
  }

  // One code point of a literal or class, with its escapes.
  Result<uint32_t> parse_char() {
    if (at_end()) return error_here("unexpected end of the grammar");
    if (peek() != '\\') {
      size_t next = pos_;
      const char32_t cp = next_code_point(text_, next);
      if (cp == kReplacementChar && text_.substr(pos_, next - pos_) != "\xEF\xBF\xBD") {
        return error_here("the text is not valid UTF-8");
      }
      advance(next - pos_);
      return static_cast<uint32_t>(cp);
    }
    advance();
    const char e = peek();
    advance();
    switch (e) {
      case 'n':
        return uint32_t{'\n'};
      case 'r':
        return uint32_t{'\r'};
      case 't':
        return uint32_t{'\t'};
      case '0':
        return uint32_t{0};
      case '\\':
      case '"':
      case '[':
      case ']':
      case '-':
      case '^':
      case '/':
      case '\'':
        return static_cast<uint32_t>(e);
      case 'x':
        return parse_hex(2);
      case 'u':
        return parse_hex(4);
      case 'U':
        return parse_hex(8);
      default:
        return error_here("unknown escape '\\{}'", e);
    }
  }

  Result<uint32_t> parse_hex(int digits) {
    uint32_t value = 0;
    for (int i = 0; i < digits; ++i) {
      const char c = peek();
      uint32_t digit = 0;
      if (c >= '0' && c <= '9')
        digit = static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        digit = static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        digit = static_cast<uint32_t>(c - 'A' + 10);
      else
        return error_here("expected {} hex digits in the escape", digits);
      value = value * 16 + digit;
      advance();
    }
    if (value > 0x10FFFF) return error_here("code point U+{:X} is beyond U+10FFFF", value);
    return value;
  }

  Result<GbnfItem> parse_literal(GbnfItem item) {
    advance();  // "
    item.kind = GbnfItem::Kind::Literal;
    while (peek() != '"') {
      if (at_end() || peek() == '\n')
        return error_here("the literal opened at column {} is not closed", item.position.column);
      auto cp = parse_char();
      if (!cp) return cp.error();
      item.literal.push_back(*cp);
    }
    advance();
    return item;
  }

  Result<GbnfItem> parse_class(GbnfItem item) {
    advance();  // [
    item.kind = GbnfItem::Kind::Chars;
    if (peek() == '^') {
      item.negated = true;
      advance();
    }
    while (peek() != ']') {
      if (at_end() || peek() == '\n')
        return error_here("the class opened at column {} is not closed", item.position.column);
      auto first = parse_char();
      if (!first) return first.error();
      uint32_t last = *first;
      if (peek() == '-' && peek(1) != ']' && peek(1) != '\0') {
        advance();
        auto end = parse_char();
        if (!end) return end.error();
        if (*end < *first) return error_here("the range ends (U+{:04X}) below its start (U+{:04X})", *end, *first);
        last = *end;
      }
      item.ranges.push_back({.first = *first, .last = last});
    }
    advance();
    return item;
  }

  Result<uint32_t> parse_count() {
    const size_t start = pos_;
    uint64_t value = 0;
    while (peek() >= '0' && peek() <= '9') {
      value = value * 10 + static_cast<uint64_t>(peek() - '0');
      if (value > kMaxRepetition) return error_here("repetition count above {}", kMaxRepetition);
      advance();
    }
    if (pos_ == start) return error_here("expected a repetition count");
    return static_cast<uint32_t>(value);
  }

  Status parse_repetition(GbnfItem& item) {
    const char c = peek();
    if (c == '*' || c == '+' || c == '?') {
      advance();
      item.min = c == '+' ? 1 : 0;
      item.max = c == '?' ? 1 : kUnbounded;
      return {};
    }
    if (c != '{') return {};
    advance();
    skip_space(false);
    auto min = parse_count();
    if (!min) return min.error();
    item.min = item.max = *min;
    skip_space(false);
    if (peek() == ',') {
      advance();
      skip_space(false);
      item.max = kUnbounded;
      if (peek() != '}') {
        auto max = parse_count();
        if (!max) return max.error();
        if (*max < *min) return error_here("{{{},{}}}: the most is below the least", *min, *max);
        item.max = *max;
      }
      skip_space(false);
    }
    if (peek() != '}') return error_here("expected '}}' to close the repetition count");
    advance();
    return {};
  }

  std::string_view text_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

Result<std::vector<GbnfRule>> parse_gbnf(std::string_view text) { return GbnfReader(text).rules(); }

}  // namespace infertune
