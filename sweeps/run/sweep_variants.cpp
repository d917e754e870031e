#include "sweeps/run/sweep_variants.h"

#include "sweeps/trial/model_variants.h"

namespace infertune {

Result<std::string> produce_model_variant(const std::string& base_model, const std::string& quant_type,
                                          const std::string& cache_dir) {
  const std::filesystem::path dir = cache_dir.empty() ? default_model_cache_dir() : std::filesystem::path(cache_dir);
  return variant_path(base_model, quant_type, dir);
}

}  // namespace infertune
