#include "engine/tokenizer/wordpiece_encoder.h"

#include <algorithm>
#include <string>

namespace infertune {

WordPieceEncoder::WordPieceEncoder(const Vocab& vocab, BertNormalizer normalizer)
    : vocab_(&vocab), normalizer_(std::move(normalizer)) {}

void WordPieceEncoder::encode(std::string_view text, bool /*starts_word*/, std::vector<int32_t>& out) const {
  for (const std::string& word : normalizer_.words(text)) {
    const std::string marked = std::string(kSpaceMarker) + word;
    const size_t first = out.size();
    for (size_t i = 0; i < marked.size();) {
      size_t j = std::min(marked.size(), i + vocab_->max_token_bytes());
      std::optional<int32_t> piece;
      for (; j > i; --j) {
        if ((piece = vocab_->find_plain(std::string_view(marked).substr(i, j - i)))) break;
      }
      if (!piece) {  // some part matches nothing: the whole word is unknown
        out.resize(first);
        break;
      }
      out.push_back(*piece);
      i = j;
    }
    if (out.size() == first && vocab_->special().unk) out.push_back(*vocab_->special().unk);
  }
}

}  // namespace infertune
