#pragma once
// A made-up SentencePiece ("llama" tokenizer model) vocabulary of any size, so that a synthetic model
// tokenizes real prompts: <unk>, <s>, </s>, the 256 byte tokens <0x00>..<0xFF> (byte fallback for any
// UTF-8 text), then filler pieces with decreasing scores: single characters, common English words and
// subwords with and without the "▁" word-start marker, then letter strings in length order. The set
// of pieces is prefix-closed, so SentencePiece's pairwise merges can reach every piece.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"

namespace infertune {

inline constexpr uint32_t kSynthUnkId = 0;
inline constexpr uint32_t kSynthBosId = 1;
inline constexpr uint32_t kSynthEosId = 2;
inline constexpr uint32_t kSynthFirstByteId = 3;  // <0x00>; <0xNN> is id 3 + NN
inline constexpr uint32_t kSynthMinVocab = 3 + 256;

// llama.cpp's token attribute values (tokenizer.ggml.token_type).
enum class TokenType : int32_t { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

struct SyntheticVocab {
  std::vector<std::string> tokens;   // [n_vocab] UTF-8 pieces
  std::vector<float> scores;         // [n_vocab] 0 for special and byte tokens, then -rank
  std::vector<int32_t> token_types;  // [n_vocab] TokenType values
};

// Deterministic: the same n_vocab always gives the same vocabulary. Errors when n_vocab < kSynthMinVocab.
Result<SyntheticVocab> make_synthetic_vocab(uint32_t n_vocab);

// The last texts.size() pieces become these control tokens (a model family's chat markers, which llama.cpp expects in
// its vocabulary). The last pieces were added last, so no other piece needs them as a prefix. Errors when the
// vocabulary has fewer filler pieces than that.
Status add_control_tokens(SyntheticVocab& vocab, std::span<const std::string_view> texts);

}  // namespace infertune
