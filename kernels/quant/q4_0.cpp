// Q4_0: 32 values per block, value = (q - 8) * d with a 4-bit code q and an f16 scale d.
// The encoder is ggml's quantize_row_q4_0_ref: d maps the value of largest magnitude exactly onto code 0
// (-8 * d), the other values round to the nearest code.
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/encode_basic.h"
#include "kernels/quant/kquant_search.h"
#include "kernels/quant/weighted_fit.h"

namespace infertune::codecs {

using namespace basic_quant;

void quantize_q4_0(const float* src, void* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* x = src + b * kBlock;
    const float d = signed_absmax(x, kBlock) / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint8_t codes[kBlock];
    for (int j = 0; j < kBlock; ++j) codes[j] = static_cast<uint8_t>(truncate_to_code(x[j] * id + 8.5f, 15));
    BlockQ4_0 block;
    block.d = to_half_scale(d);
    pack_nibbles(codes, block.qs);
    store_block(dst, b, block);
  }
}

// With an importance matrix (ggml's quantize_row_q4_0_impl): each block's scale is the weighted
// least-squares fit over 19 candidate scales (codes -8..7), weights from the row's mean square.
void quantize_q4_0_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  weighted::for_weighted_block_runs(src, importance, n, [&](int64_t first, int count, const float* weights) {
    int8_t L[8 * kBlock];
    float scales[8];
    kquant::fit_symmetric_scale_groups(count, kBlock, 8, src + first * kBlock, weights, L, scales);
    for (int k = 0; k < count; ++k) {
      BlockQ4_0 block;
      block.d = to_half_scale(scales[k]);
      pack_nibbles(reinterpret_cast<const uint8_t*>(L + k * kBlock), block.qs);  // codes are 0..15
      store_block(dst, first + k, block);
    }
  });
}

void dequantize_q4_0(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const auto block = load_block<BlockQ4_0>(src, b);
    const float d = f16_to_f32(block.d);
    for (int j = 0; j < kBlock; ++j) dst[b * kBlock + j] = static_cast<float>(nibble(block.qs, j) - 8) * d;
  }
}

}  // namespace infertune::codecs
