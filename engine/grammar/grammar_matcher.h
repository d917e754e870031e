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

  // The state after `bytes`; false when no stack survives or the bytes are not UTF-8.
  bool advance(State& state, std::string_view bytes) const;
  std::vector<Stack> advance_code_point(const std::vector<Stack>& stacks, uint32_t code_point) const;
  // Replaces rule references on top of `stack` by their alternatives until each top is a character set.
  void expand(Stack stack, std::vector<Stack>& out) const;
  void push_continuation(Stack& stack, uint32_t offset) const;
  bool may_complete(const State& state) const;

  std::shared_ptr<const Grammar> grammar_;
  State state_;
};

// Whether the whole of `text` (UTF-8) is a sentence of the grammar.
bool grammar_accepts(const Grammar& grammar, std::string_view text);

}  // namespace infertune
