// q6_K: 256-value super-blocks of 16 sub-blocks x 16 values, 6-bit signed codes with a signed 8-bit scale
// per sub-block (6.5625 bits per value). Layout and arithmetic follow ggml's block_q6_K.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/quant/blocks_k.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/kquant_search.h"

namespace infertune::codecs {
namespace {

using kquant::BlockQ6K;
using kquant::kSuperBlock;
using kquant::nearest_int;

constexpr int kSub = 16;

// Per 128-value half: code i (0-127) has its low nibble in ql[64 * half + i % 64] (low nibble for i < 64,
// high for i >= 64) and its top 2 bits at bit 2 * (i / 32) of qh[32 * half + i % 32].
void pack_6bit(const int8_t* L, BlockQ6K* y) {
  for (int half = 0; half < 2; ++half) {
    const int8_t* Lh = L + 128 * half;
    uint8_t* ql = y->ql + 64 * half;
    uint8_t* qh = y->qh + 32 * half;
    for (int l = 0; l < 32; ++l) {
      ql[l] = static_cast<uint8_t>((Lh[l] & 0xF) | ((Lh[l + 64] & 0xF) << 4));
      ql[l + 32] = static_cast<uint8_t>((Lh[l + 32] & 0xF) | ((Lh[l + 96] & 0xF) << 4));
      qh[l] = static_cast<uint8_t>((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) | ((Lh[l + 64] >> 4) << 4) |
                                   ((Lh[l + 96] >> 4) << 6));
    }
  }
}

// importance: the row's column weights for these 256 values, or null. ggml hands them to the scale fit
// as they are (no sigma2 term, unlike the other K-quants).
BlockQ6K encode_block(const float* x, const float* importance) {
  BlockQ6K y;
  int8_t L[kSuperBlock];
  float scales[kSuperBlock / kSub];
  float max_scale = 0;  // the scale of largest magnitude, with its sign
  float max_abs_scale = 0;
  kquant::fit_symmetric_scale_groups(kSuperBlock / kSub, kSub, 32, x, importance, L, scales);
  for (int j = 0; j < kSuperBlock / kSub; ++j) {
    const float abs_scale = std::fabs(scales[j]);
    if (abs_scale > max_abs_scale) {
      max_abs_scale = abs_scale;
      max_scale = scales[j];
    }
  }
  if (max_abs_scale < kquant::kGroupMaxEps) {
    std::memset(&y, 0, sizeof y);  // all codes 0 with d = 0 decode to exact zeros
    return y;
  }

  const float iscale = -128.f / max_scale;
  y.d = kquant::to_half_scale(1 / iscale);
  for (int j = 0; j < kSuperBlock / kSub; ++j) {
    y.scales[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[j])));
  }

  // Final codes against the stored scales; a sub-block whose scale is 0 keeps its fitted codes.
  const float d_all = f16_to_f32(y.d);
  for (int j = 0; j < kSuperBlock / kSub; ++j) {
    const float d = d_all * y.scales[j];
    if (!d) continue;
    for (int i = 0; i < kSub; ++i) {
      const int l = nearest_int(x[kSub * j + i] / d);
      L[kSub * j + i] = static_cast<int8_t>(std::max(-32, std::min(31, l)) + 32);
    }
  }
  pack_6bit(L, &y);
  return y;
}

}  // namespace

void quantize_q6_K(const float* src, void* dst, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    kquant::store_block(dst, b, encode_block(src + b * kSuperBlock, nullptr));
  }
}

void quantize_q6_K_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    kquant::store_block(dst, b, encode_block(src + b * kSuperBlock, importance + b * kSuperBlock));
  }
}

void dequantize_q6_K(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    const BlockQ6K block = kquant::load_block<BlockQ6K>(src, b);
    const float d = f16_to_f32(block.d);
    float* y = dst + b * kSuperBlock;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = block.ql + 64 * half;
      const uint8_t* qh = block.qh + 32 * half;
      const int8_t* sc = block.scales + 8 * half;
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * sc[is] * q1;
        y[l + 32] = d * sc[is + 2] * q2;
        y[l + 64] = d * sc[is + 4] * q3;
        y[l + 96] = d * sc[is + 6] * q4;
      }
      y += 128;
    }
  }
}

}  // namespace infertune::codecs
