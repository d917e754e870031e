#pragma once
// Deterministic random weights for synthetic models. Every row of every tensor has its own random
// stream, derived from (seed, tensor name, row index), so any number of threads, in any order, produce
// byte-identical files. Values are bell-shaped (a sum of four uniforms: cheap, and bounded at about
// 3.5 standard deviations, so no outlier wrecks a quantization block) with scales chosen to keep a
// forward pass numerically sane: unit-variance activations through each projection, residual branches
// scaled down by depth, norm gains near 1, embeddings ~0.02.
#include <cstdint>
#include <span>
#include <string_view>

#include "engine/model/arch_tensors.h"
#include "engine/model/model_config.h"

namespace infertune {

struct WeightDistribution {
  float mean = 0;
  float stddev = 0;
};

WeightDistribution weight_distribution(const TensorSpec& tensor, const ModelConfig& config);

class WeightGenerator {
 public:
  WeightGenerator(uint64_t seed, std::string_view tensor_name, WeightDistribution distribution);

  // Fills `out` with row `row` of the tensor (out.size() values: the row length).
  void fill_row(uint64_t row, std::span<float> out) const;

 private:
  uint64_t tensor_key_;
  float mean_;
  float scale_;  // stddev per unit of the integer sum
};

}  // namespace infertune
