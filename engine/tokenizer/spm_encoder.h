#pragma once
// SentencePiece BPE (tokenizer.ggml.model "llama"): spaces become "▁" (and one is prepended at the start
// of the text when add_space_prefix is set), the text starts as one symbol per UTF-8 character, and the
// adjacent pair whose concatenation is the highest-scoring vocabulary piece is merged until no pair is
// a piece (ties: the leftmost pair first). A character that is no piece falls back to its bytes'
// <0xNN> tokens, or to the unknown token when the vocabulary has no byte tokens.
#include <array>

#include "engine/tokenizer/text_encoder.h"
#include "engine/tokenizer/vocab.h"

namespace infertune {

class SpmEncoder final : public TextEncoder {
 public:
  explicit SpmEncoder(const Vocab& vocab);
  void encode(std::string_view text, bool starts_word, std::vector<int32_t>& out) const override;

 private:
  void emit_symbol(std::string_view symbol, std::vector<int32_t>& out) const;

  const Vocab* vocab_;
  std::array<int32_t, 256> byte_tokens_{};  // <0xNN> token of each byte, -1 when missing
  bool has_all_byte_tokens_ = false;
};

}  // namespace infertune
