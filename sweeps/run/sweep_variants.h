#pragma once
// The model file of a reload group that names a quantization type: the variant of the base model in that
// type, produced on first use and reused from the cache directory after that.
#include <string>

#include "kernels/result.h"

namespace infertune {

// `cache_dir` empty: the default cache directory. Returns the variant's path; errors name the base model
// and the type.
Result<std::string> produce_model_variant(const std::string& base_model, const std::string& quant_type,
                                          const std::string& cache_dir);

}  // namespace infertune
