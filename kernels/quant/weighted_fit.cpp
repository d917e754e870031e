#include "kernels/quant/weighted_fit.h"

#include <algorithm>
#include <cmath>

#include "kernels/quant/kquant_search.h"

namespace infertune::weighted {
namespace {

using kquant::nearest_int;

// Weighted squared error of x ~ scale * min(nmax, round(inv_scale * x)); the first candidate of ggml's
// search skips the clamp (its largest code is exactly nmax), which `clamp` says.
float weighted_error(int n, int nmax, const float* x, const float* w, float inv_scale, float scale, bool clamp) {
  float error = 0;
  for (int i = 0; i < n; ++i) {
    int l = nearest_int(inv_scale * x[i]);
    if (clamp) l = std::min(nmax, l);
    // ggml stores the unclamped first codes in uint8_t before using them; keep that wrap-around.
    const float code = clamp ? static_cast<float>(l) : static_cast<float>(static_cast<uint8_t>(l));
    const float diff = x[i] - scale * code;
    error += w[i] * diff * diff;
  }
  return error;
}

// The inverse scale of smallest weighted error among nmax / max and (nmax + 0.1 k) / max, k = +-1..+-4.
float best_inverse_scale(int n, int nmax, const float* x, const float* w, float max) {
  float inv_scale = nmax / max;
  float best_error = weighted_error(n, nmax, x, w, inv_scale, 1 / inv_scale, false);
  for (int k = -4; k <= 4; ++k) {
    if (k == 0) continue;
    const float candidate = (0.1f * k + nmax) / max;
    const float error = weighted_error(n, nmax, x, w, candidate, 1 / candidate, true);
    if (error < best_error) {
      best_error = error;
      inv_scale = candidate;
    }
  }
  return inv_scale;
}

}  // namespace

void value_weights(const float* importance, const float* x, float sigma2, int n, float* out) {
  for (int i = 0; i < n; ++i) out[i] = importance[i] * std::sqrt(sigma2 + x[i] * x[i]);
}

float sum_squares(const float* x, int64_t n) {
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i] * x[i];
  return sum;
}

float sum_of(const float* w, int n) {
  float sum = 0;
  for (int i = 0; i < n; ++i) sum += w[i];
  return sum;
}

float fit_positive_scale(int n, int nmax, const float* x, const float* w, uint8_t* L) {
  float max = 0;
  for (int i = 0; i < n; ++i) max = std::max(max, x[i]);
  if (max < kquant::kGroupMaxEps) {
    std::fill(L, L + n, uint8_t{0});
    return 0.f;
  }
  const float inv_scale = best_inverse_scale(n, nmax, x, w, max);
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::min(nmax, nearest_int(inv_scale * x[i]));
    L[i] = static_cast<uint8_t>(l);
    sumlx += w[i] * x[i] * l;  // ggml sums the int code here, the stored byte in the passes below
    suml2 += w[i] * l * l;
  }
  // Coordinate descent: re-derive each code from the fit of all the others; keep a move only when the
  // figure of merit sumlx^2 / suml2 grows.
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      float slx = sumlx - w[i] * x[i] * L[i];
      float sl2 = suml2 - w[i] * L[i] * L[i];
      if (!(slx > 0 && sl2 > 0)) continue;
      const int new_l = std::min(nmax, nearest_int(x[i] * sl2 / slx));
      if (new_l == L[i]) continue;
      slx += w[i] * x[i] * new_l;
      sl2 += w[i] * new_l * new_l;
      if (slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = static_cast<uint8_t>(new_l);
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (!changed) break;
  }
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

}  // namespace infertune::weighted
