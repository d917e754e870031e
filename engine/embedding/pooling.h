#pragma once
// How an embedding is made of a sequence's token states (the final-normed hidden states a Context keeps with
// ContextParams::embeddings), as llama.cpp's --pooling names them:
//   none  every token's state, one row each
//   mean  the average over the sequence's tokens
//   cls   the first token's state (position 0)
//   last  the last token's state (decoder embedding models: Qwen3-Embedding, e5-mistral, ...)
// llama.cpp's fifth, rank (a reranker's classification head), needs weights these architectures lack.
#include <cstdint>
#include <string_view>

#include "engine/model/model_config.h"
#include "kernels/result.h"

namespace infertune {

enum class Pooling { none, mean, cls, last };

std::string_view pooling_name(Pooling pooling);

// "none", "mean", "cls", "last"; errors name the flag's choices (and say why rank is not one).
Result<Pooling> parse_pooling(std::string_view name);

// The model's own ({arch}.pooling_type; none when the file does not say), as llama.cpp takes it when
// --pooling is not given. Errors on rank.
Result<Pooling> model_pooling(const ModelConfig& config);

}  // namespace infertune
