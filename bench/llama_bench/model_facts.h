#pragma once
// What bench reports about a loaded model and what its roofline figures need: size, parameter count,
// the llama-bench description, the matmul kernels that will run, and per token the bytes of weights
// read and the multiply-adds done.
#include <cstdint>
#include <string>

#include "engine/model/model.h"

namespace infertune {

struct ModelFacts {
  std::string type;         // "llama 1B Q4_K - Medium" (model_description.h)
  uint64_t size_bytes = 0;  // all tensor data, as stored (llama-bench's model_size)
  uint64_t n_params = 0;    // all tensor elements (model_n_params)
  // The matmul registry's variant for every weight type, the most bytes first ("avx2", "avx2+scalar").
  std::string kernel;
  // Some layer or output matrix is F32 / F16 / BF16: prompt batches of those may run on oneDNN.
  bool float_weights = false;
  // Bytes of weights one generated token reads: every matrix of every layer (of a mixture of experts, the
  // n_expert_used / n_expert share of the experts), the output projection, and one row of the token embedding
  // (norm gains are decoded at load and not counted).
  uint64_t weight_bytes_per_token = 0;
  uint64_t layer_weight_elements = 0;   // sum of rows x columns of the layers' matrices a token multiplies
  uint64_t output_weight_elements = 0;  // rows x columns of the output projection
};

ModelFacts model_facts(const Model& model);

}  // namespace infertune
