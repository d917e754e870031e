#pragma once
// The tokenizer metadata a GGUF file must get right for this engine, checked where the model is loaded (a bad
// file is refused at load, not at the first request that tokenizes) and where the vocabulary is read.
#include <cstdint>
#include <string_view>

#include "engine/gguf/gguf_file.h"
#include "kernels/result.h"

namespace infertune {

// tokenizer.ggml.model values this engine reads: llama (SentencePiece), gpt2 (byte-level BPE), bert (WordPiece).
bool is_supported_tokenizer_model(std::string_view model);

// tokenizer.ggml.token_type values: gguf-py's TokenType, 0 (undefined) to 6 (byte).
inline constexpr int32_t kMaxTokenType = 6;

// A tokenizer.ggml.model that is present names a supported tokenizer, and every tokenizer.ggml.token_type
// value is a token type. Errors name the key, the value and (for a type) the token's index.
Status check_tokenizer_metadata(const GgufFile& file);

}  // namespace infertune
