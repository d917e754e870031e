#pragma once
// A context-free grammar in llama.cpp's GBNF notation (the `grammar` field of llama-server, `--grammar` of
// llama-cli), compiled into the form the matcher walks: rules of alternatives, each alternative a run of
// elements (a set of code points, or a reference to a rule) ending in End.
//
//   root   ::= answer "."           # a rule: alternatives separated by |
//   answer ::= "yes" | "no" | [0-9]+ ("," [0-9]+)*
//
// Items: "literal" (escapes \n \r \t \\ \" \xHH \uHHHH \UHHHHHHHH), [a-z_] and [^"\\] (the same escapes),
// `.` (any character), a rule name, ( ... ); each may be followed by *, +, ?, {m}, {m,} or {m,n}. `#` starts a
// comment; a rule ends at the end of its line unless inside parentheses or after `|`. Groups and repetitions
// become rules of their own ("name_1", ...), as llama.cpp names them. Rules that can begin with themselves (left
// recursion, also a repetition of something that matches nothing) are refused: the matcher would never end.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"

namespace infertune {

struct CodePointRange {
  uint32_t first = 0;
  uint32_t last = 0;  // inclusive
};

struct GrammarElement {
  enum class Kind : uint8_t {
    End,      // the alternative is complete
    RuleRef,  // one of the rule's alternatives
    Chars,    // one code point in the ranges (or, negated, outside them)
  };
  Kind kind = Kind::End;
  bool negated = false;      // Chars: the code points outside the ranges ('.' is negated with none)
  uint32_t rule = 0;         // RuleRef
  uint32_t first_range = 0;  // Chars: ranges [first_range, first_range + n_ranges) of Grammar::ranges
  uint32_t n_ranges = 0;
};

class Grammar {
 public:
  // Errors name the line and column: "grammar line 2, column 9: expected '::=' after the rule name 'answer'",
  // "grammar: rule 'item' is used (line 1, column 12) but never defined", "grammar: no rule named 'root'".
  static Result<Grammar> parse(std::string_view gbnf, std::string_view root = "root");

  uint32_t root() const { return root_; }
  size_t n_rules() const { return alternatives_.size(); }
  std::string_view rule_name(uint32_t rule) const { return names_[rule]; }
  // The offsets in elements() where the rule's alternatives start.
  std::span<const uint32_t> alternatives(uint32_t rule) const { return alternatives_[rule]; }
  const GrammarElement& element(uint32_t offset) const { return elements_[offset]; }

  // Whether a Chars element takes the code point.
  bool matches(const GrammarElement& chars, uint32_t code_point) const;
  // Whether a Chars element may take some code point in [first, last] (for a character whose first bytes are
  // known: a token that ends inside a UTF-8 sequence).
  bool may_match_any(const GrammarElement& chars, uint32_t first, uint32_t last) const;

  // GBNF text of the compiled rules (synthesized ones included): for messages and tests.
  std::string describe() const;

 private:
  friend class GrammarBuilder;
  std::vector<std::string> names_;                   // [rule]
  std::vector<std::vector<uint32_t>> alternatives_;  // [rule] -> starts in elements_
  std::vector<GrammarElement> elements_;
  std::vector<CodePointRange> ranges_;
  uint32_t root_ = 0;
};

}  // namespace infertune
