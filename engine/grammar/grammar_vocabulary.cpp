#include "engine/grammar/grammar_vocabulary.h"

namespace infertune {

GrammarVocabulary::GrammarVocabulary(std::vector<std::string> pieces, std::vector<GrammarTokenRole> roles)
    : pieces_(std::move(pieces)), roles_(std::move(roles)) {
  roles_.resize(pieces_.size(), GrammarTokenRole::Never);
  for (size_t i = 0; i < pieces_.size(); ++i) {
    if (pieces_[i].empty() && roles_[i] == GrammarTokenRole::Text) roles_[i] = GrammarTokenRole::Never;
  }
}

GrammarVocabulary GrammarVocabulary::from_tokenizer(const Tokenizer& tokenizer) {
  const Vocab& vocab = tokenizer.vocab();
  const auto n = static_cast<size_t>(tokenizer.n_vocab());
  std::vector<std::string> pieces(n);
  std::vector<GrammarTokenRole> roles(n, GrammarTokenRole::Text);
  for (size_t i = 0; i < n; ++i) {
    const auto token = static_cast<int32_t>(i);
    pieces[i] = tokenizer.token_to_piece(token);
    if (tokenizer.is_end_of_generation(token)) {
      roles[i] = GrammarTokenRole::End;
    } else if (pieces[i].empty() || vocab.has_attr(token, kAttrControl | kAttrUnknown)) {
      roles[i] = GrammarTokenRole::Never;
    }
  }
  return GrammarVocabulary(std::move(pieces), std::move(roles));
}

}  // namespace infertune
