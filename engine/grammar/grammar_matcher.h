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
#include <span>
#include <string_view>
#include <vector>

#include "engine/grammar/grammar.h"
#include "engine/grammar/parse_stacks.h"
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
  // The work done so far: expansion steps and stacks sorted, summed over every step (allows() included); for
  // callers that bound a batch of checks (TokenGrammar::mask).
  size_t work() const { return work_; }

 private:
  // A UTF-8 character whose first bytes arrived and whose last have not.
  struct PartialChar {
    uint32_t value = 0;     // the bits so far
    uint8_t remaining = 0;  // continuation bytes still to come
    uint8_t length = 0;     // bytes of the whole character
  };

  struct State {
    ParseStacks stacks;
    PartialChar partial;
  };

  // Buffers every step reuses, so that steps allocate nothing once they have grown. (A matcher is used by one
  // thread at a time: the scheduler's loop, or one command.)
  struct Scratch {
    ParseStacks sets[2];             // the stacks after each code point, in turn
    ParseStacks todo;                // expand's work list
    ParseStacks dedupe;              // ParseStacks::dedupe's other buffers
    std::vector<uint32_t> stack;     // a stack being built
    std::vector<uint32_t> expanded;  // expand's stack with a reference replaced
  };

  // Runs `bytes` from `from`: false when no stack survives them, they are not UTF-8, or a step passes the bounds;
  // else the stacks after them (from's own, or a scratch set) and the partial character they end in.
  bool run(const State& from, std::string_view bytes, const ParseStacks*& stacks, PartialChar& partial) const;
  // The stacks after one code point, into `out`; false past the bounds.
  bool advance_code_point(const ParseStacks& stacks, uint32_t code_point, ParseStacks& out) const;
  // Replaces rule references on top of `stack` by their alternatives until each top is a character set, into `out`;
  // false when that passes the bounds (`steps` counts the expansions of a code point's step).
  bool expand(std::span<const uint32_t> stack, ParseStacks& out, size_t& steps) const;
  void push_continuation(std::vector<uint32_t>& stack, uint32_t offset) const;
  bool may_complete(const ParseStacks& stacks, const PartialChar& partial) const;

  std::shared_ptr<const Grammar> grammar_;
  State state_;
  bool overflowed_ = false;
  mutable Scratch scratch_;
  mutable size_t work_ = 0;
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
