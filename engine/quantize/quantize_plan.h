#pragma once
// What `infertune quantize` does with each tensor of a GGUF file, by llama-quantize's rules: weights (2-D tensors
// whose name ends in "weight", norms excepted) get the file type's mix (engine/synth/quant_mix.h: the per-tensor
// choices and the fallbacks for rows that do not fit a block), then the --token-embedding-type and
// --output-tensor-type overrides; every other tensor, and a weight already in its chosen type, is copied as it is.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/quantize/importance_file.h"
#include "engine/synth/quant_mix.h"
#include "kernels/ggml_type.h"
#include "kernels/result.h"

namespace infertune {

struct QuantizeOptions {
  FileType file_type;
  bool pure = false;                             // --pure: every weight in the file type's base type
  std::optional<GgmlType> output_tensor_type;    // --output-tensor-type
  std::optional<GgmlType> token_embedding_type;  // --token-embedding-type
  bool leave_output_tensor = false;              // --leave-output-tensor: output.weight copied as it is
  bool allow_requantize = false;                 // --allow-requantize: quantized input may be quantized again
  unsigned threads = 0;                          // 0: every hardware thread
  const ImportanceFile* importance = nullptr;    // --imatrix after --include/--exclude-weights; null: none
};

struct TensorPlan {
  const GgufTensorInfo* source = nullptr;  // in the input file
  GgmlType type = GgmlType::F32;           // in the output
  // [n_experts][row length]: the importance matrix's entry for a converted tensor (empty: none). Rows of expert e
  // (dims[2]) use slice e.
  std::span<const float> importance;
  bool missing_importance = false;  // a matrix was given but has no entry for this converted tensor
  bool convert() const { return type != source->type; }
};

// The type of every tensor of `file`, in file order, and the importance entry of each converted one (found by
// tensor name, as llama-quantize). Errors: an architecture the engine does not know, an override whose block does
// not divide a row, quantized input without allow_requantize, an importance entry whose length is not the tensor's
// row length times its experts (token_embd.weight is then quantized without one, as llama-quantize does).
Result<std::vector<TensorPlan>> plan_quantization(const GgufFile& file, const QuantizeOptions& options);

// A --type argument as llama-quantize reads it: a file type name in any case ("Q4_K_M", "q8_0"), its aliases
// (Q3_K, Q4_K, Q5_K: the _M mixes) or its LLAMA_FTYPE number ("15").
std::optional<FileType> quantize_file_type(const std::string& name);
std::string quantize_type_names();  // "F32, F16, BF16, Q8_0, ..." as llama-quantize spells them

}  // namespace infertune
