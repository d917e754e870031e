#include "engine/grammar/json_schema_pattern.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <variant>
#include <vector>

#include "engine/grammar/json_schema_gbnf.h"

namespace infertune {
namespace {

using Ranges = std::vector<CodePointRange>;

constexpr uint32_t kMaxCodePoint = 0x10FFFF;
constexpr int kMaxNesting = 32;

const Ranges kDigits{{'0', '9'}};
const Ranges kWord{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
// ECMA-262's \s: WhiteSpace and LineTerminator.
const Ranges kSpaces{{0x09, 0x0D},     {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
                     {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
// What JSON text cannot hold unescaped.
const Ranges kJsonEscaped{{0x00, 0x1F}, {'"', '"'}, {'\\', '\\'}};

// A set of characters: the ranges, or (negated) everything else.
struct CharSet {
  Ranges ranges;
  bool negated = false;
};

Ranges normalized(Ranges ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const CodePointRange& a, const CodePointRange& b) { return a.first < b.first; });
  Ranges out;
  for (const CodePointRange& range : ranges) {
    if (!out.empty() && range.first <= out.back().last + 1) {
      out.back().last = std::max(out.back().last, range.last);
    } else {
      out.push_back(range);
    }
  }
  return out;
}

Ranges complement(const Ranges& ranges) {
  Ranges out;
  uint32_t next = 0;
  for (const CodePointRange& range : normalized(ranges)) {
    if (range.first > next) out.push_back({next, range.first - 1});
    next = range.last + 1;
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return out;
}

Ranges joined(Ranges a, const Ranges& b) {
  a.insert(a.end(), b.begin(), b.end());
  return normalized(std::move(a));
}

bool contains(const Ranges& ranges, uint32_t cp) {
  return std::any_of(ranges.begin(), ranges.end(),
                     [&](const CodePointRange& r) { return r.first <= cp && cp <= r.last; });
}

// One character of the set as JSON text: unescaped where JSON allows, else its short escape. A negated set
// admits only the escapes \" \\ \b \f \n \r \t of characters outside it (never \uXXXX: narrower, not wider).
std::string char_set_expression(const CharSet& set) {
  std::vector<std::string> alternatives;
  const Ranges ranges = normalized(set.ranges);
  if (set.negated) {
    alternatives.push_back(gbnf_class(joined(ranges, kJsonEscaped), true));
    for (uint32_t cp : {'"', '\\', '\b', '\f', '\n', '\r', '\t'}) {
      if (!contains(ranges, cp)) alternatives.push_back(gbnf_literal(json_escaped(cp)));
    }
  } else {
    const Ranges plain = complement(joined(complement(ranges), kJsonEscaped));
    if (!plain.empty()) alternatives.push_back(gbnf_class(plain, false));
    for (uint32_t cp = 0; cp <= '\\'; ++cp) {
      if (contains(kJsonEscaped, cp) && contains(ranges, cp)) alternatives.push_back(gbnf_literal(json_escaped(cp)));
    }
  }
  if (alternatives.size() == 1) return alternatives[0];
  std::string out = "(";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : "") + alternatives[i];
  return out + ")";
}

struct Quantifier {
  uint64_t min = 0;
  std::optional<uint64_t> max;
};

// A piece of the translation: its GBNF text, whether it matches the empty string, and the text of what it
// matches besides the empty string (nullopt: nothing), which a repetition takes instead: Grammar::parse refuses
// to repeat what can match nothing (it would never end), and (a?)* is (a)*.
struct Piece {
  std::string text{};
  bool nullable = false;
  std::optional<std::string> nonempty{};
  bool grouped = false;  // text is one parenthesized group
};

Piece solid(const std::string& text) { return {.text = text, .nullable = false, .nonempty = text}; }

const Piece kEmpty{.text = "", .nullable = true, .nonempty = std::nullopt};

std::string alternatives_text(const std::vector<std::string>& alternatives) {
  if (alternatives.size() == 1) return alternatives[0];
  std::string out = "(";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : "") + alternatives[i];
  return out + ")";
}

// `first` then `second`.
Piece concatenated(const Piece& first, const Piece& second) {
  Piece out{.text = first.text.empty()    ? second.text
                    : second.text.empty() ? first.text
                                          : first.text + " " + second.text,
            .nullable = first.nullable && second.nullable};
  if (!out.nullable) {
    out.nonempty = out.text;
    return out;
  }
  std::vector<std::string> nonempty;  // first not empty then second, or first empty and second not
  if (first.nonempty) nonempty.push_back(*first.nonempty + (second.text.empty() ? "" : " " + second.text));
  if (second.nonempty) nonempty.push_back(*second.nonempty);
  if (!nonempty.empty()) out.nonempty = alternatives_text(nonempty);
  return out;
}

// An atom (one item in GBNF: a literal, class or group) repeated.
Piece repeated(const Piece& atom, uint64_t min, std::optional<uint64_t> max) {
  if (atom.text.empty() || max == 0u) return kEmpty;
  const bool unbounded_nullable = atom.nullable && !max;
  if (unbounded_nullable && !atom.nonempty) return kEmpty;
  Piece out{.text = unbounded_nullable ? gbnf_repeat(*atom.nonempty, 0, max) : gbnf_repeat(atom.text, min, max),
            .nullable = min == 0 || atom.nullable};
  if (!out.nullable) {
    out.nonempty = out.text;
  } else if (atom.nonempty) {
    out.nonempty = gbnf_repeat(*atom.nonempty, 1, max);
  }
  return out;
}

// An atom: a single character (merged with its neighbours into one literal) or a piece.
struct Atom {
  Piece piece{};
  std::optional<uint32_t> literal{};
};

using Escaped = std::variant<uint32_t, CharSet>;

class PatternTranslator {
 public:
  PatternTranslator(std::string_view pattern, std::string_view where) : text_(code_points(pattern)), where_(where) {}

  Result<TranslatedPattern> translate() {
    TranslatedPattern out;
    end_ = text_.size();
    if (end_ > 0 && text_[0] == '^') {
      out.anchored_start = true;
      pos_ = 1;
    }
    if (end_ > pos_ && text_[end_ - 1] == '$' && !escaped(end_ - 1)) {
      out.anchored_end = true;
      --end_;
    }
    auto expression = alternation(0);
    if (!expression) return expression.error();
    if (pos_ < end_) return error("an unmatched ')'");
    if (top_level_alternatives_ && (out.anchored_start || out.anchored_end)) {
      return error_at(0, "'^' or '$' with '|' outside a group (write ^(a|b)$)");
    }
    out.expression = std::move(expression->text);
    return out;
  }

 private:
  Error error_at(size_t pos, std::string_view what) const {
    return fail("json_schema: \"pattern\" at {} is not supported: {} at character {}", where_, what, pos + 1);
  }
  Error error(std::string_view what) const { return error_at(pos_, what); }

  bool escaped(size_t pos) const {
    size_t backslashes = 0;
    while (pos > backslashes && text_[pos - backslashes - 1] == '\\') ++backslashes;
    return backslashes % 2 == 1;
  }

  bool at(uint32_t c) const { return pos_ < end_ && text_[pos_] == c; }

  Result<Piece> alternation(int depth) {
    if (depth > kMaxNesting) return error("groups nested too deeply");
    std::vector<Piece> alternatives;
    bool empty = false;
    for (;;) {
      auto sequence = this->sequence(depth);
      if (!sequence) return sequence;
      empty = empty || sequence->text.empty();
      const bool seen = std::any_of(alternatives.begin(), alternatives.end(),
                                    [&](const Piece& p) { return p.text == sequence->text; });
      if (!sequence->text.empty() && !seen) alternatives.push_back(std::move(*sequence));
      if (!at('|')) break;
      top_level_alternatives_ = top_level_alternatives_ || depth == 0;
      ++pos_;
    }
    if (alternatives.empty()) return kEmpty;
    if (alternatives.size() == 1 && !empty) return alternatives[0];
    std::vector<std::string> texts, nonempty;
    Piece out{.nullable = empty, .grouped = !empty};  // with an empty alternative, the text is "(...)?"
    for (const Piece& alternative : alternatives) {
      texts.push_back(alternative.text);
      if (alternative.nonempty) nonempty.push_back(*alternative.nonempty);
      out.nullable = out.nullable || alternative.nullable;
    }
    out.text = (texts.size() == 1 ? "(" + texts[0] + ")" : alternatives_text(texts)) + (empty ? "?" : "");
    if (!nonempty.empty()) out.nonempty = alternatives_text(nonempty);
    return out;
  }

  Result<Piece> sequence(int depth) {
    Piece out = kEmpty;
    std::string pending;  // the JSON text of literal characters not yet added
    while (pos_ < end_ && !at('|') && !at(')')) {
      auto atom = this->atom(depth);
      if (!atom) return atom.error();
      auto quantifier = this->quantifier();
      if (!quantifier) return quantifier.error();
      if (atom->literal && !*quantifier) {
        pending += json_escaped(*atom->literal);
        continue;
      }
      if (!pending.empty()) out = concatenated(out, solid(gbnf_literal(std::exchange(pending, ""))));
      const Piece piece = atom->literal ? solid(gbnf_literal(json_escaped(*atom->literal))) : atom->piece;
      out = concatenated(out, *quantifier ? repeated(piece, (*quantifier)->min, (*quantifier)->max) : piece);
    }
    if (!pending.empty()) out = concatenated(out, solid(gbnf_literal(pending)));
    return out;
  }

  Result<Atom> atom(int depth) {
    const uint32_t c = text_[pos_];
    if (c == '(') return group(depth);
    if (c == '[') {
      auto set = char_class();
      if (!set) return set.error();
      return Atom{.piece = solid(char_set_expression(*set))};
    }
    if (c == '.') {
      ++pos_;
      return Atom{.piece = solid(char_set_expression({{{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}, true}))};
    }
    if (c == '\\') {
      ++pos_;
      auto escape = this->escape(false);
      if (!escape) return escape.error();
      if (const auto* set = std::get_if<CharSet>(&*escape)) return Atom{.piece = solid(char_set_expression(*set))};
      return Atom{.literal = std::get<uint32_t>(*escape)};
    }
    if (c == '^' || c == '$') return error("an anchor inside the pattern");
    if (c == '*' || c == '+' || c == '?' || (c == '{' && braces())) return error("a quantifier with nothing to repeat");
    ++pos_;
    return Atom{.literal = c};
  }

  Result<Atom> group(int depth) {
    const size_t open = pos_++;
    if (at('?')) {
      const uint32_t kind = pos_ + 1 < end_ ? text_[pos_ + 1] : 0;
      const bool named = (kind == '<' && pos_ + 2 < end_ && text_[pos_ + 2] != '=' && text_[pos_ + 2] != '!') ||
                         (kind == 'P' && pos_ + 2 < end_ && text_[pos_ + 2] == '<');
      if (kind == ':') {
        pos_ += 2;
      } else if (named) {
        while (pos_ < end_ && text_[pos_] != '>') ++pos_;
        if (pos_ == end_) return error_at(open, "an unclosed group name");
        ++pos_;
      } else {
        return error_at(open, "a lookaround or flag group \"(?\"");
      }
    }
    auto inner = alternation(depth + 1);
    if (!inner) return inner.error();
    if (!at(')')) return error_at(open, "an unclosed group");
    ++pos_;
    if (inner->text.empty()) return Atom{.piece = *inner};
    Piece group = *inner;  // an atom: parenthesized, its nonempty text too
    if (!inner->grouped) group.text = "(" + inner->text + ")";
    if (inner->nonempty) group.nonempty = "(" + *inner->nonempty + ")";
    return Atom{.piece = group};
  }

  // {m}, {m,} or {m,n} at pos_ (not consumed); nullopt where the brace is a plain character.
  std::optional<std::pair<Quantifier, size_t>> braces() const {
    size_t i = pos_ + 1;
    const auto number = [&]() -> std::optional<uint64_t> {
      const size_t start = i;
      uint64_t value = 0;
      for (; i < end_ && text_[i] >= '0' && text_[i] <= '9'; ++i)
        value = std::min<uint64_t>(value * 10 + (text_[i] - '0'), kMaxCount + 1);
      return i == start ? std::nullopt : std::optional(value);
    };
    const std::optional<uint64_t> min = number();
    if (!min) return std::nullopt;
    Quantifier q{.min = *min, .max = min};
    if (i < end_ && text_[i] == ',') {
      ++i;
      q.max = number();
    }
    if (i >= end_ || text_[i] != '}') return std::nullopt;
    return std::pair(q, i + 1);
  }

  Result<std::optional<Quantifier>> quantifier() {
    if (pos_ >= end_) return std::optional<Quantifier>();
    Quantifier q;
    const uint32_t c = text_[pos_];
    if (c == '*' || c == '+' || c == '?') {
      q = {.min = c == '+' ? 1u : 0u, .max = c == '?' ? std::optional<uint64_t>(1) : std::nullopt};
      ++pos_;
    } else if (const auto counted = c == '{' ? braces() : std::nullopt) {
      q = counted->first;
      if (q.min > kMaxCount || q.max > kMaxCount) return error("a count above a million");
      if (q.max && *q.max < q.min) return error("a count range out of order");
      pos_ = counted->second;
    } else {
      return std::optional<Quantifier>();
    }
    if (at('?')) ++pos_;  // lazy: the same strings
    return std::optional(q);
  }

  Result<CharSet> char_class() {
    const size_t open = pos_++;
    CharSet set;
    if (at('^')) {
      set.negated = true;
      ++pos_;
    }
    for (;;) {
      if (pos_ >= end_) return error_at(open, "an unclosed class");
      if (at(']')) break;
      auto first = class_item();
      if (!first) return first.error();
      if (const auto* inner = std::get_if<CharSet>(&*first)) {
        const Ranges ranges = inner->negated ? complement(inner->ranges) : inner->ranges;
        set.ranges.insert(set.ranges.end(), ranges.begin(), ranges.end());
        continue;
      }
      const uint32_t low = std::get<uint32_t>(*first);
      uint32_t high = low;
      if (at('-') && pos_ + 1 < end_ && text_[pos_ + 1] != ']') {
        ++pos_;
        auto last = class_item();
        if (!last) return last.error();
        if (!std::holds_alternative<uint32_t>(*last)) return error("a range that ends in a class escape");
        high = std::get<uint32_t>(*last);
        if (high < low) return error("a range out of order");
      }
      set.ranges.push_back({low, high});
    }
    ++pos_;
    if (!set.negated && set.ranges.empty()) return error_at(open, "an empty class");
    return set;
  }

  Result<Escaped> class_item() {
    if (!at('\\')) return Escaped(text_[pos_++]);
    ++pos_;
    return escape(true);
  }

  // After a backslash.
  Result<Escaped> escape(bool in_class) {
    if (pos_ >= end_) return error("a trailing backslash");
    const uint32_t e = text_[pos_++];
    switch (e) {
      case 'd':
      case 'D':
        return Escaped(CharSet{kDigits, e == 'D'});
      case 'w':
      case 'W':
        return Escaped(CharSet{kWord, e == 'W'});
      case 's':
      case 'S':
        return Escaped(CharSet{kSpaces, e == 'S'});
      case 'n':
        return Escaped(uint32_t{'\n'});
      case 'r':
        return Escaped(uint32_t{'\r'});
      case 't':
        return Escaped(uint32_t{'\t'});
      case 'f':
        return Escaped(uint32_t{'\f'});
      case 'v':
        return Escaped(uint32_t{'\v'});
      case 'x':
        return hex(2);
      case 'u':
        return unicode_escape();
      case 'b':
        if (in_class) return Escaped(uint32_t{'\b'});
        return error("a word boundary \\b");
      case '0':
        if (!at('0') && !(pos_ < end_ && text_[pos_] >= '1' && text_[pos_] <= '9')) return Escaped(uint32_t{0});
        return error("an octal escape");
      default:
        break;
    }
    if (e >= '1' && e <= '9') return error("a backreference");
    if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) return error(fmt::format("the escape \\{}", char(e)));
    return Escaped(e);
  }

  Result<Escaped> hex(int digits) {
    uint32_t value = 0;
    for (int i = 0; i < digits; ++i, ++pos_) {
      const uint32_t c = pos_ < end_ ? text_[pos_] : 0;
      const int digit = c >= '0' && c <= '9'   ? int(c - '0')
                        : c >= 'a' && c <= 'f' ? int(c - 'a' + 10)
                        : c >= 'A' && c <= 'F' ? int(c - 'A' + 10)
                                               : -1;
      if (digit < 0) return error(fmt::format("an escape without its {} hex digits", digits));
      value = value * 16 + static_cast<uint32_t>(digit);
    }
    return Escaped(value);
  }

  // \uHHHH, and a surrogate pair \uD83D\uDE00 as the one character it encodes.
  Result<Escaped> unicode_escape() {
    if (at('{')) return error("\\u{...}");
    auto unit = hex(4);
    if (!unit) return unit;
    const uint32_t high = std::get<uint32_t>(*unit);
    if (high < 0xD800 || high > 0xDFFF) return unit;
    const bool pair = high <= 0xDBFF && pos_ + 1 < end_ && text_[pos_] == '\\' && text_[pos_ + 1] == 'u';
    if (!pair) return error("a lone surrogate");
    pos_ += 2;
    auto low = hex(4);
    if (!low) return low;
    const uint32_t low_unit = std::get<uint32_t>(*low);
    if (low_unit < 0xDC00 || low_unit > 0xDFFF) return error("a lone surrogate");
    return Escaped(0x10000 + ((high - 0xD800) << 10) + (low_unit - 0xDC00));
  }

  std::vector<uint32_t> text_;
  std::string_view where_;
  size_t pos_ = 0;
  size_t end_ = 0;
  bool top_level_alternatives_ = false;
};

}  // namespace

Result<TranslatedPattern> translate_pattern(std::string_view pattern, std::string_view where) {
  return PatternTranslator(pattern, where).translate();
}

}  // namespace infertune
