#pragma once
// Which ggml type each tensor of a model gets for a llama.cpp file type ("q4_k_m", "q8_0", "f16", ...).
// The rules are llama.cpp's (llama_tensor_get_type, as of 2026), re-stated here as facts: the output
// projection (or token_embd when tied) goes to q6_K; the K mixes give attn_v / ffn_down / attn_output
// more bits in chosen layers; norms and other 1-D tensors stay f32; a row length that does not fit the
// chosen type's block falls back to a type that fits. Names and LLAMA_FTYPE numbers match llama-quantize.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/model/arch_tensors.h"
#include "engine/model/model_config.h"
#include "kernels/ggml_type.h"

namespace infertune {

struct FileType {
  std::string_view name;     // as accepted by --type (matched case-insensitively): "q4_k_m", "q4_K"
  uint32_t llama_ftype;      // general.file_type (LLAMA_FTYPE_*)
  GgmlType default_type;     // the type of most weights
  bool mixed;                // false: every weight gets default_type (the plain "q4_K" etc.)
  std::string_view summary;  // one line for --help
};

// Every file type --type accepts, in the order --help lists them.
std::span<const FileType> file_types();
std::optional<FileType> file_type_from_name(std::string_view name);
std::string file_type_names();  // "f32, f16, ..." (for error messages)

struct QuantMixOptions {
  // llama-quantize --pure: every quantizable weight gets the file type's default type (the row-length
  // fallback still applies).
  bool pure = false;
  // An importance matrix is used (llama.cpp's has_imatrix), which changes ffn_down in the first eighth of the
  // layers: q4_0 / q5_0 files give it q4_1 / q5_1 (only then), iq4_nl / iq4_xs files no longer need q5_K there.
  bool has_importance = false;
};

// The type of one tensor of `config` in a file of type `file_type`. Tensors that llama.cpp never
// quantizes (norms, biases, anything 1-D) are f32.
GgmlType tensor_type_for(const FileType& file_type, const TensorSpec& tensor, const ModelConfig& config,
                         QuantMixOptions options = {});

// llama.cpp's replacement for a type whose block does not divide a row of `row_length` values:
// iq4_xs -> iq4_nl, q2_K / q3_K -> q4_0, q4_K -> q5_0, q5_K -> q5_1, q6_K -> q8_0, and f16 when even
// that does not fit. Returns `type` unchanged when it fits.
GgmlType fallback_for_row_length(GgmlType type, uint64_t row_length);

// llama.cpp's use_more_bits(i, n): the layers that the _M mixes give more bits to (the first and last
// eighth, and every third layer in between).
bool use_more_bits(int layer, int n_layers);

}  // namespace infertune
