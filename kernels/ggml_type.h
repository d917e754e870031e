#pragma once
// The tensor element types of ggml / GGUF, with their numeric ids exactly as stored in GGUF files,
// and the per-type traits (block size, bytes per block) needed to size and validate tensors.
#include <cstdint>
#include <optional>
#include <string_view>

namespace infertune {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
};

struct GgmlTypeTraits {
  GgmlType type;
  std::string_view name;    // lower-case, as llama.cpp prints it: "q4_K", "bf16"
  uint32_t block_elements;  // values per block (1 for plain types)
  uint32_t block_bytes;     // bytes per block
  bool quantized;
};

// Traits of a known type id, or nullopt for ids that ggml does not define (or has removed).
std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t id);
const GgmlTypeTraits& ggml_type_traits(GgmlType type);

// Case-insensitive lookup by name ("Q4_K", "q4_k", "bf16").
std::optional<GgmlType> ggml_type_from_name(std::string_view name);
std::string_view ggml_type_name(GgmlType type);

// Bytes of one row of n_elements values, or nullopt when n_elements is not a multiple of the block
// size or the byte count would overflow 64 bits.
std::optional<uint64_t> ggml_row_bytes(GgmlType type, uint64_t n_elements);

}  // namespace infertune
