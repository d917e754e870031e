// q8_K: 256 int8 codes with one float scale and 16 group sums; the activation format that K-quant dot
// products pair with. Layout and arithmetic follow ggml's block_q8_K.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/quant/blocks_k.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/kquant_search.h"

namespace infertune::codecs {
namespace {

using kquant::BlockQ8K;
using kquant::kSuperBlock;

BlockQ8K encode_block(const float* x) {
  BlockQ8K y;
  float max = 0;  // the value of largest magnitude, with its sign
  float amax = 0;
  for (int i = 0; i < kSuperBlock; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (!amax) {
    std::memset(&y, 0, sizeof y);  // ggml leaves bsums unset here; they are the sums of zero codes
    return y;
  }
  // ggml maps the extreme value to -127 (not -128) so that SIMD kernels may negate codes freely.
  const float iscale = -127.f / max;
  for (int i = 0; i < kSuperBlock; ++i) {
    y.qs[i] = static_cast<int8_t>(std::min(127, kquant::nearest_int(iscale * x[i])));
  }
  for (int g = 0; g < kSuperBlock / 16; ++g) {
    int sum = 0;
    for (int i = 0; i < 16; ++i) sum += y.qs[16 * g + i];
    y.bsums[g] = static_cast<int16_t>(sum);
  }
  y.d = 1 / iscale;
  return y;
}

}  // namespace

void quantize_q8_K(const float* src, void* dst, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) kquant::store_block(dst, b, encode_block(src + b * kSuperBlock));
}

void dequantize_q8_K(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    const BlockQ8K block = kquant::load_block<BlockQ8K>(src, b);
    float* y = dst + b * kSuperBlock;
    for (int i = 0; i < kSuperBlock; ++i) y[i] = block.d * block.qs[i];
  }
}

}  // namespace infertune::codecs
