// Q8_0: 32 values per block, value = q * d with an int8 code q and an f16 scale d.
// The encoder is ggml's quantize_row_q8_0_ref: d = max|x| / 127, codes rounded half away from zero.
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/encode_basic.h"

namespace infertune::codecs {

using namespace basic_quant;

void quantize_q8_0(const float* src, void* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* x = src + b * kBlock;
    const float d = std::fabs(signed_absmax(x, kBlock)) / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ8_0 block;
    block.d = to_half_scale(d);
    for (int j = 0; j < kBlock; ++j) block.qs[j] = static_cast<int8_t>(round_to_int8(x[j] * id));
    store_block(dst, b, block);
  }
}

void dequantize_q8_0(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const auto block = load_block<BlockQ8_0>(src, b);
    const float d = f16_to_f32(block.d);
    for (int j = 0; j < kBlock; ++j) dst[b * kBlock + j] = static_cast<float>(block.qs[j]) * d;
  }
}

}  // namespace infertune::codecs
