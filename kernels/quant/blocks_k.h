#pragma once
// Super-block layouts of the K-quant formats (256 values per block), byte for byte as ggml stores them in
// GGUF tensors. All fields are byte arrays or 2-byte halves, so the structs have no padding; the static
// asserts pin the sizes to ggml's. Blocks in a row are not guaranteed to be aligned, so codecs copy them in
// and out with load_block / store_block instead of casting pointers.
#include "kernels/quant/block_io.h"
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/half.h"

namespace infertune::kquant {

inline constexpr int kSuperBlock = 256;  // QK_K: values per super-block

// 16 sub-blocks of 16 values: value = d * (scales[j] & 15) * q - dmin * (scales[j] >> 4), q in [0, 3].
struct BlockQ2K {
  uint8_t scales[16];  // [sub-block]: low nibble scale, high nibble min
  uint8_t qs[64];      // 2-bit quants, 4 per byte (see q2_K.cpp for the order)
  f16_t d;
  f16_t dmin;
};

// 16 sub-blocks of 16 values: value = d * (scale6[j] - 32) * (q - 4), q in [0, 7] (2 low bits + 1 high bit).
struct BlockQ3K {
  uint8_t hmask[32];   // high bit of each quant: bit b of byte m belongs to value 32 * b + m
  uint8_t qs[64];      // low 2 bits, 4 per byte
  uint8_t scales[12];  // 16 signed 6-bit scales (biased by 32), packed
  f16_t d;
};

// 8 sub-blocks of 32 values: value = d * scale6[j] * q - dmin * min6[j], q in [0, 15].
struct BlockQ4K {
  f16_t d;
  f16_t dmin;
  uint8_t scales[12];  // 8 (scale, min) pairs of 6 bits, packed (pack_scales_mins_6bit)
  uint8_t qs[128];     // 4-bit quants, 2 per byte
};

// As q4_K with a fifth quant bit: q in [0, 31].
struct BlockQ5K {
  f16_t d;
  f16_t dmin;
  uint8_t scales[12];
  uint8_t qh[32];   // fifth bits
  uint8_t qs[128];  // low 4 bits, 2 per byte
};

// 16 sub-blocks of 16 values: value = d * scales[j] * (q - 32), q in [0, 63].
struct BlockQ6K {
  uint8_t ql[128];  // low 4 bits
  uint8_t qh[64];   // high 2 bits, 4 per byte
  int8_t scales[16];
  f16_t d;
};

// Intermediate 8-bit format (activations for dot products): value = d * qs[i].
struct BlockQ8K {
  float d;
  int8_t qs[256];
  int16_t bsums[16];  // [group of 16]: sum of its quants
};

static_assert(sizeof(BlockQ2K) == 84);
static_assert(sizeof(BlockQ3K) == 110);
static_assert(sizeof(BlockQ4K) == 144);
static_assert(sizeof(BlockQ5K) == 176);
static_assert(sizeof(BlockQ6K) == 210);
static_assert(sizeof(BlockQ8K) == 292);

using infertune::load_block;
using infertune::store_block;

}  // namespace infertune::kquant
