// Q4_1: 32 values per block, value = q * d + m with a 4-bit code q, an f16 step d and an f16 offset m.
// The encoder is ggml's quantize_row_q4_1_ref: m is the block minimum and d spreads [min, max] over the
// 16 codes; values round to the nearest code.
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/encode_basic.h"
#include "kernels/quant/kquant_search.h"
#include "kernels/quant/weighted_fit.h"

namespace infertune::codecs {

using namespace basic_quant;

void quantize_q4_1(const float* src, void* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* x = src + b * kBlock;
    const ValueRange range = value_range(x, kBlock);
    const float d = (range.max - range.min) / 15;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint8_t codes[kBlock];
    for (int j = 0; j < kBlock; ++j) {
      codes[j] = static_cast<uint8_t>(truncate_to_code((x[j] - range.min) * id + 0.5f, 15));
    }
    BlockQ4_1 block;
    block.d = to_half_scale(d);
    block.m = to_half_scale(range.min);
    pack_nibbles(codes, block.qs);
    store_block(dst, b, block);
  }
}

// With an importance matrix (ggml's quantize_row_q4_1_impl): each block's step and offset are the weighted
// least-squares fit over 37 candidate scales (ggml's make_qkx3_quants), weights from the row's mean square.
void quantize_q4_1_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  weighted::for_weighted_block_runs(src, importance, n, [&](int64_t first, int count, const float* weights) {
    uint8_t L[8 * kBlock];
    float scales[8];
    float mins[8];
    kquant::fit_scale_min_groups(count, kBlock, 15, src + first * kBlock, weights, L, scales, mins,
                                 kquant::kWeightedScaleMinSearch);
    for (int k = 0; k < count; ++k) {
      BlockQ4_1 block;
      block.d = to_half_scale(scales[k]);
      block.m = to_half_scale(-mins[k]);
      pack_nibbles(L + k * kBlock, block.qs);
      store_block(dst, first + k, block);
    }
  });
}

void dequantize_q4_1(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const auto block = load_block<BlockQ4_1>(src, b);
    const float d = f16_to_f32(block.d);
    const float m = f16_to_f32(block.m);
    // q * d is exact (an f16 times a 4-bit code), so a fused multiply-add gives the same bits.
    for (int j = 0; j < kBlock; ++j) dst[b * kBlock + j] = static_cast<float>(nibble(block.qs, j)) * d + m;
  }
}

}  // namespace infertune::codecs
