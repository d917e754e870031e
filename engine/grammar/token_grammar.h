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

class TokenGrammar {
 public:
  TokenGrammar(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const GrammarVocabulary> vocabulary);

  // An end token where the grammar may end, a text token whose bytes fit; never a control token.
  bool allows(int32_t token) const;
  // Sets the logit of every token allows() refuses to -inf ([n_vocab] logits). One pass over the vocabulary,
  // most tokens refused on their first byte.
  void mask(std::span<float> logits) const;
  // Takes an allowed token's bytes (an end token changes nothing).
  void accept(int32_t token);

  bool can_end() const { return matcher_.can_end(); }
  bool can_continue() const { return matcher_.can_continue(); }

 private:
  GrammarMatcher matcher_;
  std::shared_ptr<const GrammarVocabulary> vocabulary_;
};

}  // namespace infertune
