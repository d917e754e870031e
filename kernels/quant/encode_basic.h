#pragma once
// Small pieces shared by the encoders of the basic formats (kernels/quant/q4_0.cpp ... iq4_xs.cpp). They
// keep ggml's arithmetic for every finite input that ggml encodes to finite blocks, and are defined for all
// others (NaN, inf, out-of-range scales), where a plain float -> int cast would be undefined behaviour.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "kernels/half.h"

namespace infertune::basic_quant {

// The value of largest magnitude with its sign; the first one wins ties, NaNs are skipped. The symmetric
// formats map it to the far end of their asymmetric code range, so its sign matters.
//   x: [n]
inline float signed_absmax(const float* x, int n) {
  float amax = 0.0f;
  float max = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

struct ValueRange {
  float min = FLT_MAX;
  float max = -FLT_MAX;
};

//   x: [n]
inline ValueRange value_range(const float* x, int n) {
  ValueRange r;
  for (int j = 0; j < n; ++j) {
    if (x[j] < r.min) r.min = x[j];
    if (x[j] > r.max) r.max = x[j];
  }
  return r;
}

// ggml turns a scaled value into a code with a truncating cast, (int)(v + offset + 0.5f), capped at the top
// code. For finite inputs v is never below -0.5, so clamping to [0, top] before the cast changes nothing;
// NaN becomes 0.
inline int truncate_to_code(float v, int top) {
  if (!(v > 0.0f)) return 0;
  if (v >= static_cast<float>(top)) return top;
  return static_cast<int>(v);
}

// std::round (halves away from zero, like ggml's roundf) into [-128, 127]; NaN becomes 0.
inline int round_to_int8(float v) {
  if (std::isnan(v)) return 0;
  return static_cast<int>(std::round(std::clamp(v, -128.0f, 127.0f)));
}

// Round to nearest, ties to even (ggml's nearest_int) into [lo, hi]; NaN becomes lo.
inline int nearest_clamped(float v, int lo, int hi) {
  if (!(v > static_cast<float>(lo))) return lo;
  if (v >= static_cast<float>(hi)) return hi;
  return static_cast<int>(std::nearbyint(v));  // default rounding mode: to nearest even
}

// f32 -> f16 for a stored scale or offset: identical to f32_to_f16 wherever that gives a finite half, but
// saturating at +-65504 where ggml would store inf (and decode inf or NaN), so that any finite input
// decodes to finite values.
inline f16_t to_half_scale(float v) {
  constexpr float kHalfMax = 65504.0f;
  return f32_to_f16(std::clamp(v, -kHalfMax, kHalfMax));
}

}  // namespace infertune::basic_quant
