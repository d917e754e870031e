// Q4_0: 32 values per block, value = (q - 8) * d with a 4-bit code q and an f16 scale d.
// The encoder is ggml's quantize_row_q4_0_ref: d maps the value of largest magnitude exactly onto code 0
// (-8 * d), the other values round to the nearest code.
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/encode_basic.h"

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

void dequantize_q4_0(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const auto block = load_block<BlockQ4_0>(src, b);
    const float d = f16_to_f32(block.d);
    for (int j = 0; j < kBlock; ++j) dst[b * kBlock + j] = static_cast<float>(nibble(block.qs, j) - 8) * d;
  }
}

}  // namespace infertune::codecs
