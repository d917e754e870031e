// IQ4_NL: 32 values per block, value = d * kIq4Values[q]: a 4-bit index into a fixed non-linear codebook
// (denser near zero) and an f16 scale d. The encoder is ggml's quantize_iq4_nl without an importance
// matrix: the scale search of kernels/quant/iq4_search.h, then every value to its nearest code.
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/encode_basic.h"
#include "kernels/quant/iq4_search.h"

namespace infertune::codecs {

using namespace basic_quant;

void quantize_iq4_nl(const float* src, void* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* x = src + b * kBlock;
    const float d = iq4_fit_block_scale(x, nullptr);
    BlockIq4Nl block;
    block.d = to_half_scale(d);
    iq4_encode_block(x, d != 0.0f ? 1.0f / d : 0.0f, block.qs);  // codes from the unrounded d, as ggml
    store_block(dst, b, block);
  }
}

void quantize_iq4_nl_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* x = src + b * kBlock;
    float weight[kBlock];
    iq4_importance_weights(x, importance + b * kBlock, kBlock, weight);
    const float d = iq4_fit_block_scale(x, weight);
    BlockIq4Nl block;
    block.d = to_half_scale(d);
    iq4_encode_block(x, d != 0.0f ? 1.0f / d : 0.0f, block.qs);
    store_block(dst, b, block);
  }
}

void dequantize_iq4_nl(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const auto block = load_block<BlockIq4Nl>(src, b);
    const float d = f16_to_f32(block.d);
    for (int j = 0; j < kBlock; ++j) dst[b * kBlock + j] = d * static_cast<float>(kIq4Values[nibble(block.qs, j)]);
  }
}

}  // namespace infertune::codecs
