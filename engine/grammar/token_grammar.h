#pragma once
// A grammar over tokens: which of the vocabulary's tokens may come next, and taking the one chosen. This is what
// constrained sampling asks of a grammar (llama-server's grammar, json_schema and response_format).
//
//   TokenGrammar g(grammar, vocabulary);
//   if (!g.allows(token)) { g.mask(logits); token = resample(logits); }
//   g.accept(token);
#include <cstdint>
#include <memory>
#include <span>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/grammar_vocabulary.h"

namespace infertune {

// The matcher work (GrammarMatcher::work) one mask may take. Over Gemma 3's 262,144 tokens a JSON schema's mask takes
// about 0.7 million and `[^e]{0,400}`'s about 5.5 million (5 ms on a Zen 4 core); a grammar written to keep hundreds
// of deep parse paths open could take far more, while the serving loop (every user's next token) waits. Past the
// bound, about 70 ms of checks, the tokens not yet checked are refused: such a request gets a shorter choice of
// tokens, not the whole server a stall.
inline constexpr size_t kMaxMaskWork = size_t{1} << 26;

class TokenGrammar {
 public:
  // `mask_work`: the matcher work (GrammarMatcher::work) one mask() may take; see kMaxMaskWork.
  TokenGrammar(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const GrammarVocabulary> vocabulary,
               size_t mask_work = kMaxMaskWork);

  // An end token where the grammar may end, a text token whose bytes fit; never a control token.
  bool allows(int32_t token) const;
  // Sets the logit of every token allows() refuses to -inf ([n_vocab] logits). One pass over the vocabulary,
  // most tokens refused on their first byte. Past the work bound, the tokens not yet checked are refused too.
  void mask(std::span<float> logits) const;
  // Takes an allowed token's bytes (an end token changes nothing).
  void accept(int32_t token);

  bool can_end() const { return matcher_.can_end(); }
  bool can_continue() const { return matcher_.can_continue(); }

 private:
  GrammarMatcher matcher_;
  std::shared_ptr<const GrammarVocabulary> vocabulary_;
  size_t mask_work_;
};

}  // namespace infertune
