#pragma once
// The model file of a reload group that names a quantization type: the variant of the base model in that
// type (sweeps/trial/model_variants.h: quantized from a real base, synthesized from a synthetic one), produced
// on first use and reused from the cache directory after that.
#include <string>

#include "kernels/result.h"
#include "sweeps/trial/model_variants.h"

namespace infertune {

// `cache_dir` empty: the default cache directory. Errors name the base model and the type.
Result<ModelVariant> produce_model_variant(const std::string& base_model, const std::string& quant_type,
                                           const std::string& cache_dir);

// The directory variants (and quality measurements) are cached in: `cache_dir`, or the default one.
std::filesystem::path variant_cache_dir(const std::string& cache_dir);

}  // namespace infertune
