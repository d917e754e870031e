#pragma once
// The "model" column of llama-bench: "<arch> <size> <file type>", e.g. "llama 1.2B Q4_K - Medium".
// The file type is named as llama.cpp names general.file_type (LLAMA_FTYPE_*); the size is the parameter
// count rounded here (llama.cpp instead looks the layer count up in a per-architecture table, so its
// "1B" is "1.2B" here).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace infertune {

// "Q4_K - Medium" for 15; nullopt for a number this table does not know.
std::optional<std::string_view> llama_file_type_name(uint32_t llama_ftype);

// 1'235'814'400 -> "1.2B", 494'032'768 -> "494M", 13'015'864'320 -> "13B".
std::string parameter_count_label(uint64_t n_params);

// `file_type`: general.file_type when the file has it; else the most common weight type's name stands in,
// marked "(guessed)" as llama.cpp does.
std::string model_description(std::string_view arch, uint64_t n_params, std::optional<uint32_t> file_type,
                              std::string_view main_weight_type);

}  // namespace infertune
