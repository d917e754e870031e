#pragma once
// Finding special tokens in raw text before the tokenizer proper sees it. Control and unknown tokens
// are recognised only when the caller asks for special-token parsing; user-defined tokens always are
// (HF tokenizers' added tokens are matched that way, and llama.cpp follows it: neox-style vocabularies
// rely on it for their runs of spaces, DeepSeek's for single characters). Longer tokens are found
// first, so a token that contains another wins.
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/tokenizer/vocab.h"

namespace infertune {

// A piece of the input: either a special token, or text still to be tokenized.
struct TextFragment {
  int32_t token = -1;  // the special token, or -1 for text
  size_t offset = 0;   // text: [offset, offset + length) of the input
  size_t length = 0;
  bool is_token() const { return token >= 0; }
  bool operator==(const TextFragment&) const = default;
};

class SpecialTokenSplitter {
 public:
  explicit SpecialTokenSplitter(const Vocab& vocab);

  std::vector<TextFragment> split(std::string_view text, bool parse_special) const;

 private:
  std::vector<int32_t> occurring_tokens(std::string_view text, bool parse_special) const;
  void split_at(std::string_view text, int32_t token, std::vector<TextFragment>& fragments) const;

  const Vocab* vocab_;
  std::vector<int32_t> by_length_;                   // special token ids, longest text first
  std::vector<std::vector<int32_t>> by_first_byte_;  // [256] ids whose text starts with that byte
  bool has_user_defined_ = false;                    // user-defined tokens are matched even without parsing
};

}  // namespace infertune
