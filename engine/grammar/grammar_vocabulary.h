#pragma once
// The vocabulary as a grammar sees it: each token's bytes, and whether it is text at all. End-of-generation
// tokens are allowed exactly where the grammar may end; other control tokens (<bos>, <start_of_turn>, ...) are not
// text and never allowed, so a constrained reply cannot wander into the chat markup. Built once per model and
// shared by every constrained request.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/tokenizer.h"

namespace infertune {

enum class GrammarTokenRole : uint8_t {
  Text,   // its bytes must fit the grammar
  End,    // ends generation: allowed where the grammar may end
  Never,  // control tokens and empty pieces
};

class GrammarVocabulary {
 public:
  static GrammarVocabulary from_tokenizer(const Tokenizer& tokenizer);
  // Explicit pieces and roles (tests).
  GrammarVocabulary(std::vector<std::string> pieces, std::vector<GrammarTokenRole> roles);

  size_t size() const { return pieces_.size(); }
  std::string_view piece(int32_t token) const { return pieces_[static_cast<size_t>(token)]; }
  GrammarTokenRole role(int32_t token) const { return roles_[static_cast<size_t>(token)]; }

 private:
  std::vector<std::string> pieces_;
  std::vector<GrammarTokenRole> roles_;
};

}  // namespace infertune
