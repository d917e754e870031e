#include "kernels/ops/rms_norm.h"

#include <cmath>
#include <cstddef>

namespace infertune {

void rms_norm(std::span<const float> x, std::span<const float> gain, float eps, std::span<float> out) {
  double sum_squares = 0;
  for (float v : x) sum_squares += static_cast<double>(v) * v;
  const float mean = static_cast<float>(sum_squares / static_cast<double>(x.size()));
  const float scale = 1.0f / std::sqrt(mean + eps);
  // Scale first, then the gain: the two roundings ggml makes (normalize, then a separate multiply).
  for (size_t i = 0; i < x.size(); ++i) out[i] = (x[i] * scale) * gain[i];
}

}  // namespace infertune
