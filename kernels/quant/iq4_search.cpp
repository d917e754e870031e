#include "kernels/quant/iq4_search.h"

#include <cmath>

#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/encode_basic.h"

namespace infertune::basic_quant {
namespace {

constexpr float kGroupMaxEps = 1e-15f;

// Weighted sums of one candidate assignment: the best scale for it is sumqx / sumq2, and it explains
// sumqx^2 / sumq2 of the weighted energy (larger is better).
struct Fit {
  float sumqx = 0.0f;
  float sumq2 = 0.0f;
};

//   x, weight: [32]
Fit fit_codes(const float* x, const float* weight, float inv_scale) {
  Fit fit;
  for (int j = 0; j < kBlock; ++j) {
    const float q = kIq4Values[iq4_nearest_index(inv_scale * x[j])];
    fit.sumqx += weight[j] * q * x[j];
    fit.sumq2 += weight[j] * q * q;
  }
  return fit;
}

}  // namespace

int iq4_nearest_index(float v) {
  if (v <= kIq4Values[0]) return 0;
  if (v >= kIq4Values[15]) return 15;
  int upper = 1;  // first value above v (ggml finds the same pair by bisection)
  while (v >= kIq4Values[upper]) ++upper;
  return v - kIq4Values[upper - 1] < kIq4Values[upper] - v ? upper - 1 : upper;
}

float iq4_fit_block_scale(const float* x, const float* weight) {
  float squares[kBlock];
  if (!weight) {
    for (int j = 0; j < kBlock; ++j) squares[j] = x[j] * x[j];
    weight = squares;
  }
  const float max = signed_absmax(x, kBlock);
  if (!(std::fabs(max) >= kGroupMaxEps)) return 0.0f;

  const Fit first = fit_codes(x, weight, 1.0f / (-max / kIq4Values[0]));
  float scale = first.sumq2 > 0 ? first.sumqx / first.sumq2 : 0.0f;
  float best = scale * first.sumqx;
  for (int t = -7; t <= 7; ++t) {
    const Fit fit = fit_codes(x, weight, static_cast<float>(t + kIq4Values[0]) / max);
    if (fit.sumq2 > 0 && fit.sumqx * fit.sumqx > best * fit.sumq2) {
      scale = fit.sumqx / fit.sumq2;
      best = scale * fit.sumqx;
    }
  }
  return scale;
}

void iq4_importance_weights(const float* x, const float* importance, int n, float* weight) {
  float sigma2 = 0;
  for (int j = 0; j < n; ++j) sigma2 += x[j] * x[j];
  sigma2 *= 2.f / static_cast<float>(n);
  for (int j = 0; j < n; ++j) weight[j] = importance[j] * std::sqrt(sigma2 + x[j] * x[j]);
}

void iq4_encode_block(const float* x, float inv_scale, uint8_t* qs) {
  uint8_t codes[kBlock];
  for (int j = 0; j < kBlock; ++j) codes[j] = static_cast<uint8_t>(iq4_nearest_index(inv_scale * x[j]));
  pack_nibbles(codes, qs);
}

}  // namespace infertune::basic_quant
