// encode_scale_min_superblock_weighted (kernels/quant/kquant_search.h): the importance-weighted half that
// q4_K and q5_K share.
#include <algorithm>

#include "kernels/quant/kquant_search.h"
#include "kernels/quant/weighted_fit.h"

namespace infertune::kquant {

void encode_scale_min_superblock_weighted(const float* x, const float* importance, int nmax, ScaleMinCodes* out) {
  constexpr int kSub = 32;
  constexpr int kGroups = 8;
  const float sigma2 = 2 * weighted::sum_squares(x, kSub * kGroups) / (kSub * kGroups);
  float weights[kSub * kGroups];
  weighted::value_weights(importance, x, sigma2, kSub * kGroups, weights);
  float sub_weights[kGroups];  // how much each sub-block's scale matters: its summed value weights
  for (int j = 0; j < kGroups; ++j) sub_weights[j] = weighted::sum_of(weights + kSub * j, kSub);

  float scales[kGroups];
  float mins[kGroups];
  fit_scale_min_groups(kGroups, kSub, nmax, x, weights, out->L, scales, mins, kWeightedScaleMinSearch);
  uint8_t q_scales[kGroups];
  uint8_t q_mins[kGroups];
  const float d = weighted::fit_positive_scale(kGroups, 63, scales, sub_weights, q_scales);
  const float dmin = weighted::fit_positive_scale(kGroups, 63, mins, sub_weights, q_mins);
  // Codes above 63 only arise from a negative fitted scale (wrapped to 8 bits, as in ggml); q5_K clamps
  // them, q4_K packs them as they are. Both are the same for every code the fit gives normally.
  if (nmax == 31) {
    for (int j = 0; j < kGroups; ++j) {
      q_scales[j] = std::min<uint8_t>(63, q_scales[j]);
      q_mins[j] = std::min<uint8_t>(63, q_mins[j]);
    }
  }
  pack_scales_mins_6bit(q_scales, q_mins, out->scales);
  out->d = to_half_scale(d);
  out->dmin = to_half_scale(dmin);
  requantize_scale_min_codes(x, nmax, out);
}

}  // namespace infertune::kquant
