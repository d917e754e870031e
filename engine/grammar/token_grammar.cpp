#include "engine/grammar/token_grammar.h"

#include <array>
#include <limits>
#include <string>

namespace infertune {

TokenGrammar::TokenGrammar(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const GrammarVocabulary> vocabulary,
                           size_t mask_work)
    : matcher_(std::move(grammar)), vocabulary_(std::move(vocabulary)), mask_work_(mask_work) {}

bool TokenGrammar::allows(int32_t token) const {
  if (token < 0 || static_cast<size_t>(token) >= vocabulary_->size()) return false;
  switch (vocabulary_->role(token)) {
    case GrammarTokenRole::End:
      return matcher_.can_end();
    case GrammarTokenRole::Never:
      return false;
    case GrammarTokenRole::Text:
      return matcher_.allows(vocabulary_->piece(token));
  }
  return false;
}

void TokenGrammar::mask(std::span<float> logits) const {
  // Which first bytes can follow at all: one matcher step per byte value instead of one per token.
  std::array<bool, 256> first_byte{};
  for (size_t b = 0; b < first_byte.size(); ++b) first_byte[b] = matcher_.allows(std::string(1, static_cast<char>(b)));
  constexpr float kImpossible = -std::numeric_limits<float>::infinity();
  const size_t n = std::min(logits.size(), vocabulary_->size());
  const size_t work_end = matcher_.work() + mask_work_;
  for (size_t i = 0; i < n; ++i) {
    if (logits[i] == kImpossible) continue;
    if (matcher_.work() > work_end) {  // past the bound: see kMaxMaskWork
      logits[i] = kImpossible;
      continue;
    }
    const auto token = static_cast<int32_t>(i);
    const std::string_view piece = vocabulary_->piece(token);
    const bool possible =
        vocabulary_->role(token) != GrammarTokenRole::Text || first_byte[static_cast<uint8_t>(piece.front())];
    if (!possible || !allows(token)) logits[i] = kImpossible;
  }
  for (size_t i = n; i < logits.size(); ++i) logits[i] = kImpossible;
}

void TokenGrammar::accept(int32_t token) {
  if (token >= 0 && static_cast<size_t>(token) < vocabulary_->size() &&
      vocabulary_->role(token) == GrammarTokenRole::Text) {
    matcher_.accept(vocabulary_->piece(token));
  }
}

}  // namespace infertune
