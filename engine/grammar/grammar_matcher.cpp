#include "engine/grammar/grammar_matcher.h"

#include <fmt/format.h>

#include <algorithm>
#include <span>

namespace infertune {
namespace {

// How many continuation bytes a lead byte announces, and its payload bits; nullopt-like 0xFF for bytes that
// cannot start a character (continuations, overlong leads C0/C1, F5 and above).
struct Lead {
  uint8_t continuation = 0xFF;
  uint32_t bits = 0;
};

Lead utf8_lead(uint8_t byte) {
  if (byte < 0x80) return {0, byte};
  if (byte >= 0xC2 && byte <= 0xDF) return {1, byte & 0x1Fu};
  if (byte >= 0xE0 && byte <= 0xEF) return {2, byte & 0x0Fu};
  if (byte >= 0xF0 && byte <= 0xF4) return {3, byte & 0x07u};
  return {};
}

// The least code point a sequence of `length` bytes may encode: anything below has a shorter form, and an
// overlong form (F0 80 80 A0 for a space) must not slip a character past the grammar.
uint32_t least_code_point(uint8_t length) {
  switch (length) {
    case 2:
      return 0x80;
    case 3:
      return 0x800;
    case 4:
      return 0x10000;
    default:
      return 0;
  }
}

bool is_surrogate(uint32_t cp) { return cp >= 0xD800 && cp <= 0xDFFF; }

void dedupe(std::vector<std::vector<uint32_t>>& stacks) {
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
}

}  // namespace

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
  size_t steps = 0;
  for (uint32_t start : grammar_->alternatives(grammar_->root())) {
    Stack stack;
    push_continuation(stack, start);
    if (!expand(std::move(stack), state_.stacks, steps)) {
      overflowed_ = true;
      state_.stacks.clear();
      return;
    }
  }
  dedupe(state_.stacks);
}

void GrammarMatcher::push_continuation(Stack& stack, uint32_t offset) const {
  // An alternative's end needs no entry: popping the stack returns to the rule that referred to it. Leaving it
  // out keeps right recursion (x* as rule ::= x rule) at a constant depth.
  if (grammar_->element(offset).kind != GrammarElement::Kind::End) stack.push_back(offset);
}

bool GrammarMatcher::expand(Stack stack, std::vector<Stack>& out, size_t& steps) const {
  // A work list rather than recursion: a chain of rules thousands deep must not exhaust the call stack. The grammar
  // has no left recursion (Grammar::parse refuses it), so this ends.
  std::vector<Stack> todo{std::move(stack)};
  while (!todo.empty()) {
    if (++steps > kMaxExpansionSteps) return false;
    Stack top = std::move(todo.back());
    todo.pop_back();
    if (top.empty() || grammar_->element(top.back()).kind == GrammarElement::Kind::Chars) {
      out.push_back(std::move(top));
      if (out.size() > kMaxParseStacks) return false;
      continue;
    }
    const uint32_t offset = top.back();
    const std::span<const uint32_t> alternatives = grammar_->alternatives(grammar_->element(offset).rule);
    top.pop_back();
    push_continuation(top, offset + 1);
    for (size_t a = alternatives.size(); a-- > 0;) {
      Stack next = top;
      push_continuation(next, alternatives[a]);
      todo.push_back(std::move(next));
    }
  }
  return true;
}

bool GrammarMatcher::advance_code_point(const std::vector<Stack>& stacks, uint32_t code_point,
                                        std::vector<Stack>& out) const {
  out.clear();
  size_t steps = 0;
  for (const Stack& stack : stacks) {
    if (stack.empty() || !grammar_->matches(grammar_->element(stack.back()), code_point)) continue;
    Stack next(stack.begin(), stack.end() - 1);
    push_continuation(next, stack.back() + 1);
    if (!expand(std::move(next), out, steps)) return false;
  }
  dedupe(out);
  return true;
}

bool GrammarMatcher::may_complete(const State& state) const {
  if (state.partial.remaining == 0) return !state.stacks.empty();
  const unsigned shift = 6u * state.partial.remaining;
  const uint32_t first = std::max(state.partial.value << shift, least_code_point(state.partial.length));
  const uint32_t last = std::min((state.partial.value << shift) | ((1u << shift) - 1u), uint32_t{0x10FFFF});
  if (first > last) return false;
  return std::any_of(state.stacks.begin(), state.stacks.end(), [&](const Stack& stack) {
    return !stack.empty() && grammar_->may_match_any(grammar_->element(stack.back()), first, last);
  });
}

bool GrammarMatcher::advance(State& state, std::string_view bytes) const {
  for (const char c : bytes) {
    const auto byte = static_cast<uint8_t>(c);
    PartialChar& partial = state.partial;
    if (partial.remaining == 0) {
      const Lead lead = utf8_lead(byte);
      if (lead.continuation == 0xFF) return false;
      partial = {
          .value = lead.bits, .remaining = lead.continuation, .length = static_cast<uint8_t>(lead.continuation + 1)};
    } else {
      if ((byte & 0xC0u) != 0x80u) return false;
      partial.value = (partial.value << 6) | (byte & 0x3Fu);
      --partial.remaining;
    }
    if (partial.remaining > 0) {
      if (!may_complete(state)) return false;
      continue;
    }
    if (partial.value > 0x10FFFF || partial.value < least_code_point(partial.length) || is_surrogate(partial.value)) {
      return false;
    }
    std::vector<Stack> next;
    if (!advance_code_point(state.stacks, partial.value, next) || next.empty()) return false;
    state.stacks = std::move(next);
    partial = {};
  }
  return true;
}

bool GrammarMatcher::allows(std::string_view bytes) const {
  State state = state_;
  return advance(state, bytes);
}

bool GrammarMatcher::accept(std::string_view bytes) {
  State state = state_;
  if (!advance(state, bytes)) return false;
  state_ = std::move(state);
  return true;
}

bool GrammarMatcher::can_end() const {
  return state_.partial.remaining == 0 &&
         std::any_of(state_.stacks.begin(), state_.stacks.end(), [](const Stack& s) { return s.empty(); });
}

bool GrammarMatcher::can_continue() const {
  return std::any_of(state_.stacks.begin(), state_.stacks.end(), [](const Stack& s) { return !s.empty(); });
}

bool grammar_accepts(const Grammar& grammar, std::string_view text) {
  GrammarMatcher matcher(std::make_shared<const Grammar>(grammar));
  return matcher.accept(text) && matcher.can_end();
}

Result<std::shared_ptr<const Grammar>> compile_grammar(std::string_view gbnf) {
  auto parsed = Grammar::parse(gbnf);
  if (!parsed) return parsed.error();
  auto grammar = std::make_shared<const Grammar>(std::move(*parsed));
  if (GrammarMatcher(grammar).overflowed()) {
    return fail(
        "grammar: its start opens more than {} parse paths at once (optional parts nested too deep?); "
        "the matcher follows at most that many",
        kMaxParseStacks);
  }
  return grammar;
}

}  // namespace infertune
