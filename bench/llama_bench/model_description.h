#pragma once
// The "model" column of llama-bench, "<arch> <size class> <file type>", spelled as llama.cpp spells it
// ("llama 1B Q4_K - Medium", "llama ?B (guessed) all F32"), so that rows of both tools key alike wherever the
// column is a key (llama.cpp's scripts/compare-llama-bench.py). The parameter count is model_n_params.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/gguf/gguf_file.h"
#include "engine/model/model_config.h"

namespace infertune {

// "Q4_K - Medium" for 15; nullopt for a number this table does not know.
std::optional<std::string_view> llama_file_type_name(uint32_t llama_ftype);

// llama.cpp's size class for a model's shape. Its table, per architecture, looks at the layer count and for a
// few counts at the vocabulary, width or heads: "1B" for a 16-layer llama, "?B" for a shape it has no entry for.
std::string_view llama_size_class(const ModelConfig& config);

// The LLAMA_FTYPE llama.cpp assumes for a file without general.file_type: that of the type most tensors have
// (of types with equal counts, the first to reach that count in tensor-name order); 0 (all F32) for a type
// with no file type of its own, as llama.cpp falls back.
uint32_t guessed_llama_file_type(std::span<const GgufTensorInfo> tensors);

// The whole column; a guessed file type reads "(guessed) all F32", an unknown number "unknown, may not work",
// as in llama.cpp.
std::string model_description(const ModelConfig& config, std::span<const GgufTensorInfo> tensors);

}  // namespace infertune
