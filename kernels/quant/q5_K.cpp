// q5_K: as q4_K (8 sub-blocks x 32 values, 6-bit scale and min each) with 5-bit codes (5.5 bits per value).
// Layout and arithmetic follow ggml's block_q5_K.
#include <cstring>

#include "kernels/quant/blocks_k.h"
#include "kernels/quant/codecs.h"
#include "kernels/quant/kquant_search.h"

namespace infertune::codecs {

using kquant::BlockQ5K;
using kquant::kSuperBlock;

// ggml's quantize_row_q5_K_ref: 16 candidate scales from nmax - 0.5 to nmax + 1, squared error.
constexpr kquant::ScaleMinSearch kQ5Search{-0.5f, 0.1f, 15, false};

namespace {

void store_codes(const kquant::ScaleMinCodes& codes, void* dst, int64_t b) {
  BlockQ5K block;
  block.d = codes.d;
  block.dmin = codes.dmin;
  std::memcpy(block.scales, codes.scales, sizeof block.scales);
  std::memset(block.qh, 0, sizeof block.qh);
  // Chunk c of 64 values: low nibbles as in q4_K; the fifth bits of its two halves go to bits 2c, 2c+1
  // of qh[l].
  for (int chunk = 0; chunk < 4; ++chunk) {
    const uint8_t* L = codes.L + 64 * chunk;
    const uint8_t low_bit = static_cast<uint8_t>(1u << (2 * chunk));
    const uint8_t high_bit = static_cast<uint8_t>(2u << (2 * chunk));
    for (int l = 0; l < 32; ++l) {
      const int q1 = L[l];
      const int q2 = L[l + 32];
      if (q1 > 15) block.qh[l] |= low_bit;
      if (q2 > 15) block.qh[l] |= high_bit;
      block.qs[32 * chunk + l] = static_cast<uint8_t>((q1 & 0xF) | ((q2 & 0xF) << 4));
    }
  }
  kquant::store_block(dst, b, block);
}

}  // namespace

void quantize_q5_K(const float* src, void* dst, int64_t n) {
  kquant::ScaleMinCodes codes;
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    kquant::encode_scale_min_superblock(src + b * kSuperBlock, 31, kQ5Search, &codes);
    store_codes(codes, dst, b);
  }
}

void quantize_q5_K_weighted(const float* src, void* dst, int64_t n, const float* importance) {
  kquant::ScaleMinCodes codes;
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    kquant::encode_scale_min_superblock_weighted(src + b * kSuperBlock, importance + b * kSuperBlock, 31, &codes);
    store_codes(codes, dst, b);
  }
}

void dequantize_q5_K(const void* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    const BlockQ5K block = kquant::load_block<BlockQ5K>(src, b);
    const float d = f16_to_f32(block.d);
    const float min = f16_to_f32(block.dmin);
    float* y = dst + b * kSuperBlock;
    for (int chunk = 0; chunk < 4; ++chunk) {
      const auto [d1, m1, d2, m2] = kquant::chunk_scale_min(d, min, block.scales, chunk);
      const uint8_t* q = block.qs + 32 * chunk;
      const unsigned low_bit = 1u << (2 * chunk);
      const unsigned high_bit = 2u << (2 * chunk);
      for (int l = 0; l < 32; ++l) y[l] = d1 * ((q[l] & 0xF) + (block.qh[l] & low_bit ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l) y[32 + l] = d2 * ((q[l] >> 4) + (block.qh[l] & high_bit ? 16 : 0)) - m2;
      y += 64;
    }
  }
}

}  // namespace infertune::codecs
