#pragma once
// Byte-level BPE (tokenizer.ggml.model "gpt2"): the pre-tokenizer cuts the text into words; each word
// starts as one symbol per byte (the token of the byte's character in GPT-2's byte-level alphabet), and
// the adjacent pair with the lowest merge rank (its line in tokenizer.ggml.merges) is merged until no
// pair has a rank (ties: the leftmost first). With ignore_merges (Llama 3), a word that is itself a
// token is taken whole.
#include <array>
#include <unordered_map>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/text_encoder.h"
#include "engine/tokenizer/vocab.h"
#include "kernels/result.h"

namespace infertune {

class BpeEncoder final : public TextEncoder {
 public:
  // Reads tokenizer.ggml.merges and builds the rank table once.
  static Result<BpeEncoder> create(const Vocab& vocab, const GgufFile& file);

  void encode(std::string_view text, bool starts_word, std::vector<int32_t>& out) const override;

 private:
  struct Merge {
    int32_t rank;
    int32_t result;  // the token the pair becomes
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  const Merge* find_merge(int32_t left, int32_t right) const;
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  BpeEncoder(const Vocab& vocab, PreTokenizer pre, bool ignore_merges);

  const Vocab* vocab_;
  PreTokenizer pre_;
  bool ignore_merges_;
  std::array<int32_t, 256> byte_tokens_{};      // token of each byte's alphabet character, -1 when missing
  std::unordered_map<uint64_t, Merge> merges_;  // (left id, right id) -> rank and result
};

}  // namespace infertune
