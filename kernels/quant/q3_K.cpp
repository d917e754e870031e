// q3_K: 256-value super-blocks of 16 sub-blocks x 16 values, 3-bit signed codes with a signed 6-bit scale
// per sub-block (3.4375 bits per value). Layout and arithmetic follow ggml's block_q3_K.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/quant/blocks_k.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/kquant_search.h"
#include "kernels/quant/weighted_fit.h"

namespace infertune::codecs {
namespace {

using kquant::BlockQ3K;
using kquant::kSuperBlock;
using kquant::nearest_int;

constexpr int kSub = 16;

// The 16 scales are 6-bit values biased by 32: low nibbles of 0-7 in bytes 0-7 (low half), of 8-15 in bytes
// 0-7 (high half); the top 2 bits of scale j sit at bit 2 * (j / 4) of byte 8 + j % 4.
void set_scale6(uint8_t* packed, int j, int biased) {
  if (j < 8) {
    packed[j] = static_cast<uint8_t>(packed[j] | (biased & 0xF));
  } else {
    packed[j - 8] = static_cast<uint8_t>(packed[j - 8] | ((biased & 0xF) << 4));
  }
  packed[8 + j % 4] = static_cast<uint8_t>(packed[8 + j % 4] | ((biased >> 4) << (2 * (j / 4))));
}

int get_scale6(const uint8_t* packed, int j) {
  const int low = j < 8 ? packed[j] & 0xF : packed[j - 8] >> 4;
  const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | (high << 4)) - 32;
}

void finish_block(const float* x, int8_t* L, BlockQ3K* y_out);

BlockQ3K encode_block(const float* x) {
  BlockQ3K y;
  int8_t L[kSuperBlock];
  float scales[kSuperBlock / kSub];
  float max_scale = 0;  // the scale of largest magnitude, with its sign
  float amax = 0;
  for (int j = 0; j < kSuperBlock / kSub; ++j) {
    scales[j] = kquant::fit_q3_scale(kSub, 4, x + kSub * j, L + kSub * j);
    const float scale = std::fabs(scales[j]);
    if (scale > amax) {
      amax = scale;
      max_scale = scales[j];
    }
  }

  std::memset(y.scales, 0, sizeof y.scales);
  if (max_scale) {
    const float iscale = -32.f / max_scale;
    for (int j = 0; j < kSuperBlock / kSub; ++j) {
      const int8_t l = static_cast<int8_t>(nearest_int(iscale * scales[j]));
      set_scale6(y.scales, j, std::max<int>(-32, std::min<int>(31, l)) + 32);
    }
    y.d = kquant::to_half_scale(1 / iscale);
  } else {
    y.d = f32_to_f16(0.f);
  }

  finish_block(x, L, &y);
  return y;
}

// Final codes against the stored scales (a sub-block whose scale is 0 keeps its fitted codes), packed into y.
//   x, L: [256]
void finish_block(const float* x, int8_t* L, BlockQ3K* y_out) {
  BlockQ3K& y = *y_out;
  const float d_all = f16_to_f32(y.d);
  for (int j = 0; j < kSuperBlock / kSub; ++j) {
    const float d = d_all * get_scale6(y.scales, j);
    if (!d) continue;
    for (int i = 0; i < kSub; ++i) {
      const int l = nearest_int(x[kSub * j + i] / d);
      L[kSub * j + i] = static_cast<int8_t>(std::max(-4, std::min(3, l)) + 4);
    }
  }

  // Bit 2 of code i goes to bit i / 32 of hmask[i % 32]; bits 0-1 are packed as in q2_K.
  std::memset(y.hmask, 0, sizeof y.hmask);
  for (int i = 0; i < kSuperBlock; ++i) {
    if (L[i] > 3) {
      y.hmask[i % 32] = static_cast<uint8_t>(y.hmask[i % 32] | (1u << (i / 32)));
      L[i] = static_cast<int8_t>(L[i] - 4);
    }
  }
  for (int half = 0; half < 2; ++half) {
    const int8_t* Lh = L + 128 * half;
    for (int l = 0; l < 32; ++l) {
      y.qs[32 * half + l] = static_cast<uint8_t>(Lh[l] | (Lh[l + 32] << 2) | (Lh[l + 64] << 4) | (Lh[l + 96] << 6));
    }
  }
}

// With an importance matrix (ggml's quantize_row_q3_K_impl): weights importance[i] * sqrt(sigma2 + x[i]^2)
// with sigma2 twice the super-block's mean square, a weighted symmetric fit per sub-block, and the 16
// scales quantized to 6 bits by a weighted symmetric fit of their own (each weighted by its sub-block's
// summed weights).
//   x, importance: [256]
BlockQ3K encode_block_weighted(const float* x, const float* importance) {
  const float sigma2 = 2 * weighted::sum_squares(x, kSuperBlock) / kSuperBlock;
  float weights[kSuperBlock];
  weighted::value_weights(importance, x, sigma2, kSuperBlock, weights);
  float sub_weights[kSuperBlock / kSub];
  for (int j = 0; j < kSuperBlock / kSub; ++j) sub_weights[j] = weighted::sum_of(weights + kSub * j, kSub);

  int8_t L[kSuperBlock];
  float scales[kSuperBlock / kSub];
  kquant::fit_symmetric_scale_groups(kSuperBlock / kSub, kSub, 4, x, weights, L, scales);
  int8_t q_scales[kSuperBlock / kSub];  // biased by 32: 0..63
  float d = 0;
  kquant::fit_symmetric_scale_groups(1, kSuperBlock / kSub, 32, scales, sub_weights, q_scales, &d);
  BlockQ3K y;
  std::memset(y.scales, 0, sizeof y.scales);
  for (int j = 0; j < kSuperBlock / kSub; ++j) set_scale6(y.scales, j, q_scales[j]);
  y.d = kquant::to_half_scale(d);
  finish_block(x, L, &y);
  return y;
}

}  // namespace

void quantize_q3_K(const float* src, void* dst, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) kquant::store_block(dst, b, encode_block(src + b * kSuperBlock));
}

void quantize_q3_K_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    kquant::store_block(dst, b, encode_block_weighted(src + b * kSuperBlock, importance + b * kSuperBlock));
  }
}

void dequantize_q3_K(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    const BlockQ3K block = kquant::load_block<BlockQ3K>(src, b);
    const float d_all = f16_to_f32(block.d);
    float* y = dst + b * kSuperBlock;
    // Output order: half (128 values) -> shift (32 values) -> two 16-value sub-blocks; the high-bit mask
    // advances with every 32 values.
    int is = 0;
    unsigned mask = 1;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = block.qs + 32 * half;
      for (int shift = 0; shift < 8; shift += 2) {
        for (int part = 0; part < 2; ++part) {
          const float dl = d_all * get_scale6(block.scales, is++);
          for (int l = 16 * part; l < 16 * part + 16; ++l) {
            *y++ = dl * (((q[l] >> shift) & 3) - ((block.hmask[l] & mask) ? 0 : 4));
          }
        }
        mask <<= 1;
      }
    }
  }
}

}  // namespace infertune::codecs
