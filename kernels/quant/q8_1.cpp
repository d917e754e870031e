// Q8_1: Q8_0 plus s = d * sum(q), the intermediate format that activations are quantized to for dot
// products against Q4_1 / Q5_1. The encoder is ggml's quantize_row_q8_1_ref. ggml has no decoder for it;
// ours reads the codes like Q8_0 (value = q * d) and ignores s.
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/encode_basic.h"

namespace infertune::codecs {

using namespace basic_quant;

void quantize_q8_1(const float* src, void* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* x = src + b * kBlock;
    const float d = std::fabs(signed_absmax(x, kBlock)) / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    BlockQ8_1 block;
    int sum = 0;
    for (int j = 0; j < kBlock; ++j) {
      block.qs[j] = static_cast<int8_t>(round_to_int8(x[j] * id));
      sum += block.qs[j];
    }
    block.d = to_half_scale(d);
    block.s = to_half_scale(static_cast<float>(sum) * d);  // from the unrounded d, as ggml does
    store_block(dst, b, block);
  }
}

void dequantize_q8_1(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const auto block = load_block<BlockQ8_1>(src, b);
    const float d = f16_to_f32(block.d);
    for (int j = 0; j < kBlock; ++j) dst[b * kBlock + j] = static_cast<float>(block.qs[j]) * d;
  }
}

}  // namespace infertune::codecs
