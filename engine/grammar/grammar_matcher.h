#pragma once
// Where generation stands in a grammar: the set of parse stacks (positions in the grammar's rules, innermost
// last) that the text so far leaves open, as a pushdown automaton run over code points. A stack's top is
// always a character set, the next thing it can take; an empty stack means the text so far is a whole sentence.
// Text arrives as token bytes, so a token may end inside a UTF-8 character: the matcher keeps those bytes and
// lets a token through while some stack may take a character that starts with them.
//
//   GrammarMatcher m(grammar);
//   if (m.allows("{\"a\"")) m.accept("{\"a\"");
//   m.can_end();
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/grammar/grammar.h"
#include "kernels/result.h"

namespace infertune {

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);

  // Whether the bytes can follow the text so far (some stack survives them). Empty text is allowed.
  bool allows(std::string_view bytes) const;
  // Takes the bytes; false, and nothing changes, when allows() is false.
  bool accept(std::string_view bytes);
  // Whether the text so far is a whole sentence (the grammar may end here).
  bool can_end() const;
  // Whether anything but the end may follow.
  bool can_continue() const;
  // Whether the grammar's start already opened more parse stacks than the matcher follows (kMaxParseStacks):
  // such a matcher allows nothing. compile_grammar() refuses these grammars.
  bool overflowed() const { return overflowed_; }

  const Grammar& grammar() const { return *grammar_; }

 private:
  using Stack = std::vector<uint32_t>;  // element offsets, innermost last

  // A UTF-8 character whose first bytes arrived and whose last have not.
  struct PartialChar {
    uint32_t value = 0;     // the bits so far
    uint8_t remaining = 0;  // continuation bytes still to come
    uint8_t length = 0;     // bytes of the whole character
  };

  struct State {
    std::vector<Stack> stacks;
    PartialChar partial;
  };

  // The state after `bytes`; false when no stack survives, the bytes are not UTF-8, or a step passes the bounds.
  bool advance(State& state, std::string_view bytes) const;
  // The stacks after one code point, into `out`; false past the bounds.
  bool advance_code_point(const std::vector<Stack>& stacks, uint32_t code_point, std::vector<Stack>& out) const;
  // Replaces rule references on top of `stack` by their alternatives until each top is a character set; false
  // when that passes the bounds (`steps` counts the expansions of a code point's step).
  bool expand(Stack stack, std::vector<Stack>& out, size_t& steps) const;
  void push_continuation(Stack& stack, uint32_t offset) const;
  bool may_complete(const State& state) const;

  std::shared_ptr<const Grammar> grammar_;
  State state_;
  bool overflowed_ = false;
};

// The bounds on one step of the matcher. Masking the vocabulary costs a step per token and byte, so the parse stacks
// a step may open bound a server step's time: a grammar that opens more at once (optional parts nested hundreds
// deep, say) is refused. Real grammars open a few to a few dozen (a JSON object with 30 optional keys: about 30).
inline constexpr size_t kMaxParseStacks = 512;
inline constexpr size_t kMaxExpansionSteps = size_t{1} << 13;

// Grammar::parse, then the matcher's first step: a grammar whose start passes the bounds is refused here, with a
// message, rather than allowing nothing later.
Result<std::shared_ptr<const Grammar>> compile_grammar(std::string_view gbnf);

// Whether the whole of `text` (UTF-8) is a sentence of the grammar.
bool grammar_accepts(const Grammar& grammar, std::string_view text);

}  // namespace infertune
