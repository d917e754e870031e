#include "sweeps/run/sweep_variants.h"

namespace infertune {

std::filesystem::path variant_cache_dir(const std::string& cache_dir) {
  return cache_dir.empty() ? default_model_cache_dir() : std::filesystem::path(cache_dir);
}

Result<ModelVariant> produce_model_variant(const std::string& base_model, const std::string& quant_type,
                                           const std::string& cache_dir) {
  return produce_variant(base_model, quant_type, variant_cache_dir(cache_dir));
}

}  // namespace infertune
