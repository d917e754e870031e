#pragma once
// What each tokenizer algorithm provides: the tokens of a piece of plain text (special tokens have
// already been split out of it by SpecialTokenSplitter).
#include <cstdint>
#include <string_view>
#include <vector>

namespace infertune {

class TextEncoder {
 public:
  virtual ~TextEncoder() = default;
  // Appends the tokens of `text` to `out`. `starts_word`: the text begins the input or follows a special
  // token (SentencePiece adds its leading-space marker there).
  virtual void encode(std::string_view text, bool starts_word, std::vector<int32_t>& out) const = 0;
};

}  // namespace infertune
