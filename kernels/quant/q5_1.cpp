// Q5_1: 32 values per block, value = q * d + m with a 5-bit code q, an f16 step d and an f16 offset m.
// The encoder is ggml's quantize_row_q5_1_ref: as Q4_1 over 32 codes.
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/encode_basic.h"
#include "kernels/quant/kquant_search.h"
#include "kernels/quant/weighted_fit.h"

namespace infertune::codecs {

using namespace basic_quant;

void quantize_q5_1(const float* src, void* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* x = src + b * kBlock;
    const ValueRange range = value_range(x, kBlock);
    const float d = (range.max - range.min) / 31;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint8_t codes[kBlock];
    for (int j = 0; j < kBlock; ++j) {
      codes[j] = static_cast<uint8_t>(truncate_to_code((x[j] - range.min) * id + 0.5f, 31));
    }
    BlockQ5_1 block;
    block.d = to_half_scale(d);
    block.m = to_half_scale(range.min);
    pack_5bit_codes(codes, block.qs, block.qh);
    store_block(dst, b, block);
  }
}

// With an importance matrix (ggml's quantize_row_q5_1_impl): as Q4_1's, with codes 0..31.
void quantize_q5_1_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  weighted::for_weighted_block_runs(src, importance, n, [&](int64_t first, int count, const float* weights) {
    uint8_t L[8 * kBlock];
    float scales[8];
    float mins[8];
    kquant::fit_scale_min_groups(count, kBlock, 31, src + first * kBlock, weights, L, scales, mins,
                                 kquant::kWeightedScaleMinSearch);
    for (int k = 0; k < count; ++k) {
      BlockQ5_1 block;
      block.d = to_half_scale(scales[k]);
      block.m = to_half_scale(-mins[k]);
      pack_5bit_codes(L + k * kBlock, block.qs, block.qh);
      store_block(dst, first + k, block);
    }
  });
}

void dequantize_q5_1(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const auto block = load_block<BlockQ5_1>(src, b);
    const float d = f16_to_f32(block.d);
    const float m = f16_to_f32(block.m);
    const uint32_t high = read_high_bits(block.qh);
    for (int j = 0; j < kBlock; ++j) {
      const int q = nibble(block.qs, j) | static_cast<int>(((high >> j) & 1u) << 4);
      dst[b * kBlock + j] = static_cast<float>(q) * d + m;  // q * d is exact: fusing it changes nothing
    }
  }
}

}  // namespace infertune::codecs
