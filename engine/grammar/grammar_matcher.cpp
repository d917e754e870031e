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

}  // namespace

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
  size_t steps = 0;
  for (uint32_t start : grammar_->alternatives(grammar_->root())) {
    std::vector<uint32_t>& stack = scratch_.stack;
    stack.clear();
    push_continuation(stack, start);
    if (!expand(stack, state_.stacks, steps)) {
      overflowed_ = true;
      state_.stacks.clear();
      return;
    }
  }
  state_.stacks.dedupe(scratch_.dedupe);
}

void GrammarMatcher::push_continuation(std::vector<uint32_t>& stack, uint32_t offset) const {
  // An alternative's end needs no entry: popping the stack returns to the rule that referred to it. Leaving it
  // out keeps right recursion (x* as rule ::= x rule) at a constant depth.
  if (grammar_->element(offset).kind != GrammarElement::Kind::End) stack.push_back(offset);
}

bool GrammarMatcher::expand(std::span<const uint32_t> stack, ParseStacks& out, size_t& steps) const {
  // A work list rather than recursion: a chain of rules thousands deep must not exhaust the call stack. The grammar
  // has no left recursion (Grammar::parse refuses it), so this ends.
  ParseStacks& todo = scratch_.todo;
  std::vector<uint32_t>& expanded = scratch_.expanded;
  todo.clear();
  todo.push(stack);
  while (!todo.empty()) {
    ++work_;
    if (++steps > kMaxExpansionSteps) return false;
    const std::span<const uint32_t> top = todo.back();
    if (top.empty() || grammar_->element(top.back()).kind == GrammarElement::Kind::Chars) {
      out.push(top);
      todo.pop_back();
      if (out.size() > kMaxParseStacks) return false;
      continue;
    }
    const uint32_t offset = top.back();
    const std::span<const uint32_t> alternatives = grammar_->alternatives(grammar_->element(offset).rule);
    expanded.assign(top.begin(), top.end() - 1);
    push_continuation(expanded, offset + 1);
    todo.pop_back();
    for (size_t a = alternatives.size(); a-- > 0;) {
      if (grammar_->element(alternatives[a]).kind == GrammarElement::Kind::End) {
        todo.push(expanded);
      } else {
        todo.push(expanded, alternatives[a]);
      }
    }
  }
  return true;
}

bool GrammarMatcher::advance_code_point(const ParseStacks& stacks, uint32_t code_point, ParseStacks& out) const {
  out.clear();
  size_t steps = 0;
  std::vector<uint32_t>& next = scratch_.stack;
  for (size_t i = 0; i < stacks.size(); ++i) {
    const std::span<const uint32_t> stack = stacks[i];
    if (stack.empty() || !grammar_->matches(grammar_->element(stack.back()), code_point)) continue;
    next.assign(stack.begin(), stack.end() - 1);
    push_continuation(next, stack.back() + 1);
    if (!expand(next, out, steps)) return false;
  }
  work_ += out.size();
  out.dedupe(scratch_.dedupe);
  return true;
}

bool GrammarMatcher::may_complete(const ParseStacks& stacks, const PartialChar& partial) const {
  const unsigned shift = 6u * partial.remaining;
  const uint32_t first = std::max(partial.value << shift, least_code_point(partial.length));
  const uint32_t last = std::min((partial.value << shift) | ((1u << shift) - 1u), uint32_t{0x10FFFF});
  if (first > last) return false;
  for (size_t i = 0; i < stacks.size(); ++i) {
    const std::span<const uint32_t> stack = stacks[i];
    if (!stack.empty() && grammar_->may_match_any(grammar_->element(stack.back()), first, last)) return true;
  }
  return false;
}

bool GrammarMatcher::run(const State& from, std::string_view bytes, const ParseStacks*& stacks,
                         PartialChar& partial) const {
  stacks = &from.stacks;
  partial = from.partial;
  size_t turn = 0;
  for (const char c : bytes) {
    const auto byte = static_cast<uint8_t>(c);
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
      if (!may_complete(*stacks, partial)) return false;
      continue;
    }
    if (partial.value > 0x10FFFF || partial.value < least_code_point(partial.length) || is_surrogate(partial.value)) {
      return false;
    }
    // The two scratch sets take turns, so the step never writes the set it reads.
    ParseStacks& next = scratch_.sets[turn++ % 2];
    if (!advance_code_point(*stacks, partial.value, next) || next.empty()) return false;
    stacks = &next;
    partial = {};
  }
  return true;
}

bool GrammarMatcher::allows(std::string_view bytes) const {
  const ParseStacks* stacks = nullptr;
  PartialChar partial;
  return run(state_, bytes, stacks, partial);
}

bool GrammarMatcher::accept(std::string_view bytes) {
  const ParseStacks* stacks = nullptr;
  PartialChar partial;
  if (!run(state_, bytes, stacks, partial)) return false;
  if (stacks != &state_.stacks) state_.stacks = *stacks;
  state_.partial = partial;
  return true;
}

bool GrammarMatcher::can_end() const {
  if (state_.partial.remaining != 0) return false;
  for (size_t i = 0; i < state_.stacks.size(); ++i) {
    if (state_.stacks[i].empty()) return true;
  }
  return false;
}

bool GrammarMatcher::can_continue() const {
  for (size_t i = 0; i < state_.stacks.size(); ++i) {
    if (!state_.stacks[i].empty()) return true;
  }
  return false;
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
