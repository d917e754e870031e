// q2_K: 256-value super-blocks of 16 sub-blocks x 16 values, 2-bit codes with a 4-bit scale and 4-bit min
// per sub-block (2.625 bits per value). Layout and arithmetic follow ggml's block_q2_K.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/quant/blocks_k.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/kquant_search.h"
#include "kernels/quant/weighted_fit.h"

namespace infertune::codecs {
namespace {

using kquant::BlockQ2K;
using kquant::kSuperBlock;
using kquant::nearest_int;

constexpr int kSub = 16;
constexpr float kScaleLevels = 15.f;  // 4-bit sub-block scales and mins
// ggml's quantize_row_q2_K_ref: 16 candidate scales from nmax - 0.5 to nmax + 1, absolute error.
constexpr kquant::ScaleMinSearch kQ2Search{-0.5f, 0.1f, 15, true};

// Codes 0-3 of value i go to bits 2 * ((i % 128) / 32) of byte (i / 128) * 32 + i % 32.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int half = 0; half < 2; ++half) {
    const uint8_t* Lh = L + 128 * half;
    for (int l = 0; l < 32; ++l) {
      qs[32 * half + l] = static_cast<uint8_t>(Lh[l] | (Lh[l + 32] << 2) | (Lh[l + 64] << 4) | (Lh[l + 96] << 6));
    }
  }
}

void finish_block(const float* x, uint8_t* L, BlockQ2K* y_out);

BlockQ2K encode_block(const float* x) {
  BlockQ2K y;
  uint8_t L[kSuperBlock];
  float scales[kSuperBlock / kSub];
  float mins[kSuperBlock / kSub];
  float weights[kSuperBlock];
  for (int i = 0; i < kSuperBlock; ++i) weights[i] = std::fabs(x[i]);
  kquant::fit_scale_min_groups(kSuperBlock / kSub, kSub, 3, x, weights, L, scales, mins, kQ2Search);
  float max_scale = 0;  // the min is subtracted, so scales are positive
  float max_min = 0;
  for (int j = 0; j < kSuperBlock / kSub; ++j) {
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }

  // Truncations to 8 bits are ggml's; they only matter for a negative fitted scale.
  if (max_scale > 0) {
    const float iscale = kScaleLevels / max_scale;
    for (int j = 0; j < kSuperBlock / kSub; ++j) y.scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
    y.d = kquant::to_half_scale(max_scale / kScaleLevels);
  } else {
    std::memset(y.scales, 0, sizeof y.scales);
    y.d = f32_to_f16(0.f);
  }
  if (max_min > 0) {
    const float iscale = kScaleLevels / max_min;
    for (int j = 0; j < kSuperBlock / kSub; ++j) {
      y.scales[j] = static_cast<uint8_t>(y.scales[j] | (nearest_int(iscale * mins[j]) << 4));
    }
    y.dmin = kquant::to_half_scale(max_min / kScaleLevels);
  } else {
    y.dmin = f32_to_f16(0.f);
  }

  finish_block(x, L, &y);
  return y;
}

// Final codes against the stored scales (a sub-block whose scale rounded to 0 keeps its fitted codes),
// packed into y.
//   x, L: [256]
void finish_block(const float* x, uint8_t* L, BlockQ2K* y_out) {
  BlockQ2K& y = *y_out;
  const float d_all = f16_to_f32(y.d);
  const float dmin_all = f16_to_f32(y.dmin);
  for (int j = 0; j < kSuperBlock / kSub; ++j) {
    const float d = d_all * (y.scales[j] & 0xF);
    if (!d) continue;
    const float dm = dmin_all * (y.scales[j] >> 4);
    for (int i = 0; i < kSub; ++i) {
      const int l = nearest_int((x[kSub * j + i] + dm) / d);
      L[kSub * j + i] = static_cast<uint8_t>(std::max(0, std::min(3, l)));
    }
  }
  pack_2bit(L, y.qs);
}

// With an importance matrix (ggml's quantize_row_q2_K_impl): weights importance[i] * sqrt(sigma2 + x[i]^2)
// with sigma2 the super-block's mean square, the make_qkx3_quants search per sub-block, and the 16 scales
// and mins quantized to 4 bits by weighted fits of their own (each sub-block weighted by its summed weights).
//   x, importance: [256]
BlockQ2K encode_block_weighted(const float* x, const float* importance) {
  const float sigma2 = weighted::sum_squares(x, kSuperBlock) / kSuperBlock;
  float weights[kSuperBlock];
  weighted::value_weights(importance, x, sigma2, kSuperBlock, weights);
  float sub_weights[kSuperBlock / kSub];
  for (int j = 0; j < kSuperBlock / kSub; ++j) sub_weights[j] = weighted::sum_of(weights + kSub * j, kSub);

  uint8_t L[kSuperBlock];
  float scales[kSuperBlock / kSub];
  float mins[kSuperBlock / kSub];
  kquant::fit_scale_min_groups(kSuperBlock / kSub, kSub, 3, x, weights, L, scales, mins,
                               kquant::kWeightedScaleMinSearch);
  uint8_t q_scales[kSuperBlock / kSub];
  uint8_t q_mins[kSuperBlock / kSub];
  const float d = weighted::fit_positive_scale(kSuperBlock / kSub, 15, scales, sub_weights, q_scales);
  const float dmin = weighted::fit_positive_scale(kSuperBlock / kSub, 15, mins, sub_weights, q_mins);
  BlockQ2K y;
  y.d = kquant::to_half_scale(d);
  y.dmin = kquant::to_half_scale(dmin);
  for (int j = 0; j < kSuperBlock / kSub; ++j) y.scales[j] = static_cast<uint8_t>(q_scales[j] | (q_mins[j] << 4));
  finish_block(x, L, &y);
  return y;
}

}  // namespace

void quantize_q2_K(const float* src, void* dst, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) kquant::store_block(dst, b, encode_block(src + b * kSuperBlock));
}

void quantize_q2_K_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    kquant::store_block(dst, b, encode_block_weighted(src + b * kSuperBlock, importance + b * kSuperBlock));
  }
}

void dequantize_q2_K(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    const BlockQ2K block = kquant::load_block<BlockQ2K>(src, b);
    const float d = f16_to_f32(block.d);
    const float min = f16_to_f32(block.dmin);
    float* y = dst + b * kSuperBlock;
    // Output order: half (128 values) -> shift (32 values) -> two 16-value sub-blocks.
    int is = 0;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = block.qs + 32 * half;
      for (int shift = 0; shift < 8; shift += 2) {
        for (int part = 0; part < 2; ++part) {
          const uint8_t sc = block.scales[is++];
          const float dl = d * (sc & 0xF);
          const float ml = min * (sc >> 4);
          for (int l = 0; l < 16; ++l) *y++ = dl * ((q[16 * part + l] >> shift) & 3) - ml;
        }
      }
    }
  }
}

}  // namespace infertune::codecs
