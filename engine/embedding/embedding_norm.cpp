#include "engine/embedding/embedding_norm.h"

#include <algorithm>
#include <cmath>

namespace infertune {
namespace {

constexpr double kInt16Range = 32760.0;  // llama.cpp's, a little inside 32767

// The divisor of `mode` (1: no scaling).
double norm_of(std::span<const float> values, int mode) {
  double norm = 0;
  switch (mode) {
    case -1:
      return 1;
    case 0:
      for (float v : values) norm = std::max(norm, std::fabs(static_cast<double>(v)));
      return norm / kInt16Range;
    case 1:
      for (float v : values) norm += std::fabs(static_cast<double>(v));
      return norm;
    case 2:
      for (float v : values) norm += static_cast<double>(v) * v;
      return std::sqrt(norm);
    default:
      for (float v : values) norm += std::pow(std::fabs(static_cast<double>(v)), mode);
      return std::pow(norm, 1.0 / mode);
  }
}

}  // namespace

void normalize_embedding(std::span<float> values, int mode) {
  if (mode < 0) return;
  const double norm = norm_of(values, mode);
  const double scale = norm > 0 ? 1.0 / norm : 0.0;
  for (float& v : values) v = static_cast<float>(v * scale);
}

}  // namespace infertune
