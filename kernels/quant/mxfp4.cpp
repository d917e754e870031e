// MXFP4: 32 values per block, value = mxfp4_scale(e) * kMxfp4Values[q], a 4-bit index into the doubled FP4
// (E2M1) codebook and one power-of-two scale per block. The encoder is ggml's quantize_row_mxfp4_ref, which
// ggml also runs when it is given an importance matrix (so MXFP4 has no weighted encoder here): the block's
// largest magnitude fixes the exponent, then every value takes its nearest code.
#include <cmath>
#include <cstdint>

#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/codecs.h"

namespace infertune::codecs {
namespace {

using namespace basic_quant;

// ggml's e = (uint8_t)(floorf(log2f(amax)) - 2 + 127): the scale 2^(e - 128) puts amax / d in [8, 16), so the
// largest code (12) covers 3/4 of the binade and the rest clips to it. log2f, not an exact exponent: ggml's
// rounded log2f decides the binade of values just below a power of two, and the bytes must match.
// Below amax = 2^-125 the exponent is negative and ggml's cast leaves its low byte (x86's truncating
// conversion); infinities give 0 there. Both are spelled out here, where a plain cast would be undefined.
uint8_t block_exponent(float amax) {
  if (!(amax > 0.0f) || std::isinf(amax)) return 0;
  const int exponent = static_cast<int>(std::floor(std::log2(amax))) - 2 + 127;
  return static_cast<uint8_t>(exponent & 0xFF);
}

// The code whose value * d is nearest to x; on equal distances the lower code wins (ggml's best_index_mxfp4
// keeps the first strictly better one), so +0 (code 0) beats -0 (code 8) and, at a midpoint, the smaller
// magnitude of a positive pair and the first-listed of a negative pair win. NaN gets code 0.
int nearest_code(float x, float d) {
  int best = 0;
  float best_err = std::fabs(static_cast<float>(kMxfp4Values[0]) * d - x);
  for (int i = 1; i < 16; ++i) {
    const float err = std::fabs(static_cast<float>(kMxfp4Values[i]) * d - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return best;
}

}  // namespace

void quantize_mxfp4(const float* src, void* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* x = src + b * kBlock;
    float amax = 0.0f;
    for (int j = 0; j < kBlock; ++j) amax = std::fmax(amax, std::fabs(x[j]));  // fmax skips NaN, as ggml's `<`
    BlockMxfp4 block;
    block.e = block_exponent(amax);
    const float d = mxfp4_scale(block.e);
    uint8_t codes[kBlock];
    for (int j = 0; j < kBlock; ++j) codes[j] = static_cast<uint8_t>(nearest_code(x[j], d));
    pack_nibbles(codes, block.qs);
    store_block(dst, b, block);
  }
}

void dequantize_mxfp4(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const auto block = load_block<BlockMxfp4>(src, b);
    const float d = mxfp4_scale(block.e);
    for (int j = 0; j < kBlock; ++j) {
      dst[b * kBlock + j] = d * static_cast<float>(kMxfp4Values[nibble(block.qs, j)]);
    }
  }
}

}  // namespace infertune::codecs
