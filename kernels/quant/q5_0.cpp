// Q5_0: 32 values per block, value = (q - 16) * d with a 5-bit code q and an f16 scale d.
// The encoder is ggml's quantize_row_q5_0_ref: as Q4_0 with d = max / -16.
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/encode_basic.h"
#include "kernels/quant/kquant_search.h"
#include "kernels/quant/weighted_fit.h"

namespace infertune::codecs {

using namespace basic_quant;

void quantize_q5_0(const float* src, void* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* x = src + b * kBlock;
    const float d = signed_absmax(x, kBlock) / -16;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint8_t codes[kBlock];
    for (int j = 0; j < kBlock; ++j) codes[j] = static_cast<uint8_t>(truncate_to_code(x[j] * id + 16.5f, 31));
    BlockQ5_0 block;
    block.d = to_half_scale(d);
    pack_5bit_codes(codes, block.qs, block.qh);
    store_block(dst, b, block);
  }
}

// With an importance matrix (ggml's quantize_row_q5_0_impl): as Q4_0's, with codes -16..15.
void quantize_q5_0_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  weighted::for_weighted_block_runs(src, importance, n, [&](int64_t first, int count, const float* weights) {
    int8_t L[8 * kBlock];
    float scales[8];
    kquant::fit_symmetric_scale_groups(count, kBlock, 16, src + first * kBlock, weights, L, scales);
    for (int k = 0; k < count; ++k) {
      BlockQ5_0 block;
      block.d = to_half_scale(scales[k]);
      pack_5bit_codes(reinterpret_cast<const uint8_t*>(L + k * kBlock), block.qs, block.qh);  // codes are 0..31
      store_block(dst, first + k, block);
    }
  });
}

void dequantize_q5_0(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const auto block = load_block<BlockQ5_0>(src, b);
    const float d = f16_to_f32(block.d);
    const uint32_t high = read_high_bits(block.qh);
    for (int j = 0; j < kBlock; ++j) {
      const int q = nibble(block.qs, j) | static_cast<int>(((high >> j) & 1u) << 4);
      dst[b * kBlock + j] = static_cast<float>(q - 16) * d;
    }
  }
}

}  // namespace infertune::codecs
