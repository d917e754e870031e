// q4_K: 256-value super-blocks of 8 sub-blocks x 32 values, 4-bit codes with a 6-bit scale and min per
// sub-block (4.5 bits per value). Layout and arithmetic follow ggml's block_q4_K.
#include <cstring>

#include "kernels/quant/blocks_k.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/kquant_search.h"

namespace infertune::codecs {

using kquant::BlockQ4K;
using kquant::kSuperBlock;

// ggml's quantize_row_q4_K_ref: 21 candidate scales from nmax - 1 to nmax + 1, squared error.
constexpr kquant::ScaleMinSearch kQ4Search{-1.f, 0.1f, 20, false};

namespace {

void store_codes(const kquant::ScaleMinCodes& codes, void* dst, int64_t b) {
  BlockQ4K block;
  block.d = codes.d;
  block.dmin = codes.dmin;
  std::memcpy(block.scales, codes.scales, sizeof block.scales);
  // Each 64-value chunk shares 32 bytes: the first 32 values in the low nibbles, the next 32 in the high.
  for (int chunk = 0; chunk < 4; ++chunk) {
    const uint8_t* L = codes.L + 64 * chunk;
    for (int l = 0; l < 32; ++l) block.qs[32 * chunk + l] = static_cast<uint8_t>(L[l] | (L[l + 32] << 4));
  }
  kquant::store_block(dst, b, block);
}

}  // namespace

void quantize_q4_K(const float* src, void* dst, int64_t n) {
  kquant::ScaleMinCodes codes;
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    kquant::encode_scale_min_superblock(src + b * kSuperBlock, 15, kQ4Search, &codes);
    store_codes(codes, dst, b);
  }
}

void quantize_q4_K_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  kquant::ScaleMinCodes codes;
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    kquant::encode_scale_min_superblock_weighted(src + b * kSuperBlock, importance + b * kSuperBlock, 15, &codes);
    store_codes(codes, dst, b);
  }
}

void dequantize_q4_K(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    const BlockQ4K block = kquant::load_block<BlockQ4K>(src, b);
    const float d = f16_to_f32(block.d);
    const float min = f16_to_f32(block.dmin);
    float* y = dst + b * kSuperBlock;
    for (int chunk = 0; chunk < 4; ++chunk) {
      const auto [d1, m1, d2, m2] = kquant::chunk_scale_min(d, min, block.scales, chunk);
      const uint8_t* q = block.qs + 32 * chunk;
      for (int l = 0; l < 32; ++l) y[l] = d1 * (q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) y[32 + l] = d2 * (q[l] >> 4) - m2;
      y += 64;
    }
  }
}

}  // namespace infertune::codecs
