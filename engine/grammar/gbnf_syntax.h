#pragma once
// GBNF text -> its syntax tree: rules, alternatives, items with their repetition counts, each with the line and
// column it came from. grammar.cpp compiles the tree into a Grammar; keeping the two apart lets the compiler
// point at the source of a rule it synthesizes for a group or a repetition.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/grammar.h"
#include "kernels/result.h"

namespace infertune {

struct SourcePosition {
  uint32_t line = 1;
  uint32_t column = 1;
};

inline constexpr uint32_t kUnbounded = std::numeric_limits<uint32_t>::max();

struct GbnfItem;

struct GbnfSequence {
  std::vector<GbnfItem> items;  // no initializer: GbnfItem is not complete yet
};

struct GbnfItem {
  enum class Kind : uint8_t { Literal, Chars, RuleRef, Group };
  Kind kind = Kind::Literal;
  std::vector<uint32_t> literal{};           // Literal: its code points (may be empty: "")
  std::vector<CodePointRange> ranges{};      // Chars
  bool negated = false;                      // Chars: [^...] and '.'
  std::string name{};                        // RuleRef
  std::vector<GbnfSequence> alternatives{};  // Group
  uint32_t min = 1;                          // repetitions: ? is {0,1}, * {0,}, + {1,}
  uint32_t max = 1;                          // kUnbounded: no upper bound
  SourcePosition position{};
};

struct GbnfRule {
  std::string name{};
  std::vector<GbnfSequence> alternatives{};
  SourcePosition position{};
};

// Errors: "grammar line L, column C: <what was expected>".
Result<std::vector<GbnfRule>> parse_gbnf(std::string_view text);

}  // namespace infertune
