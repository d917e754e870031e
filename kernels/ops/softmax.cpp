#include "kernels/ops/softmax.h"

#include <cmath>
#include <limits>

namespace infertune {

void softmax(std::span<float> x) {
  float max = -std::numeric_limits<float>::infinity();
  for (float v : x) max = std::fmax(max, v);
  if (max == -std::numeric_limits<float>::infinity()) {
    for (float& v : x) v = 0;
    return;
  }
  double sum = 0;
  for (float& v : x) {
    v = std::exp(v - max);
    sum += v;
  }
  const float inverse = static_cast<float>(1.0 / sum);
  for (float& v : x) v *= inverse;
}

}  // namespace infertune
