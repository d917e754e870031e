// IQ4_XS: IQ4_NL's codebook in 256-value super-blocks: one f16 scale d and, per 32-value sub-block, a
// 6-bit scale ls, value = d * (ls - 32) * kIq4Values[q]. The encoder is ggml's quantize_iq4_xs without an
// importance matrix: fit each sub-block's scale (kernels/quant/iq4_search.h), set d = -max_scale / 32 from
// the scale of largest magnitude, round each sub-block scale to a multiple of d, recode with it.
#include <cmath>

#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/encode_basic.h"
#include "kernels/quant/iq4_search.h"

namespace infertune::codecs {

using namespace basic_quant;

namespace {

constexpr int kSubBlocks = kSuperBlock / kBlock;

int sub_block_scale(const BlockIq4Xs& block, int ib) {
  const int low = (block.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF;
  const int high = (block.scales_h >> (2 * ib)) & 3;
  return low | (high << 4);
}

// importance: the row's column weights for these 256 values, or null.
//   x, importance: [256]
BlockIq4Xs encode_super_block(const float* x, const float* importance) {
  float weights[kSuperBlock];
  if (importance) iq4_importance_weights(x, importance, kSuperBlock, weights);
  float scales[kSubBlocks];
  float max_scale = 0.0f;  // the sub-block scale of largest magnitude, with its sign (first on ties)
  for (int ib = 0; ib < kSubBlocks; ++ib) {
    scales[ib] = iq4_fit_block_scale(x + ib * kBlock, importance ? weights + ib * kBlock : nullptr);
    if (std::fabs(scales[ib]) > std::fabs(max_scale)) max_scale = scales[ib];
  }
  // Negative so that the largest scale becomes code -32 (ls = 0), the end with one more step.
  const float d = -max_scale / 32;  // -0.0 for an all-zero super-block, stored as such (as ggml)
  const float id = d != 0.0f ? 1.0f / d : 0.0f;

  BlockIq4Xs block{};
  block.d = to_half_scale(d);
  for (int ib = 0; ib < kSubBlocks; ++ib) {
    const int l = nearest_clamped(id * scales[ib], -32, 31);
    const float dl = d * static_cast<float>(l);
    iq4_encode_block(x + ib * kBlock, dl != 0.0f ? 1.0f / dl : 0.0f, block.qs + ib * (kBlock / 2));
    const int ls = l + 32;
    block.scales_l[ib / 2] |= static_cast<uint8_t>((ls & 0xF) << (4 * (ib % 2)));
    block.scales_h |= static_cast<uint16_t>((ls >> 4) << (2 * ib));
  }
  return block;
}

}  // namespace

void quantize_iq4_xs(const float* src, void* dst, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) store_block(dst, b, encode_super_block(src + b * kSuperBlock, nullptr));
}

void quantize_iq4_xs_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    store_block(dst, b, encode_super_block(src + b * kSuperBlock, importance + b * kSuperBlock));
  }
}

void dequantize_iq4_xs(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    const auto block = load_block<BlockIq4Xs>(src, b);
    const float d = f16_to_f32(block.d);
    for (int ib = 0; ib < kSubBlocks; ++ib) {
      const float dl = d * static_cast<float>(sub_block_scale(block, ib) - 32);
      const uint8_t* qs = block.qs + ib * (kBlock / 2);
      float* y = dst + b * kSuperBlock + ib * kBlock;
      for (int j = 0; j < kBlock; ++j) y[j] = dl * static_cast<float>(kIq4Values[nibble(qs, j)]);
    }
  }
}

}  // namespace infertune::codecs
