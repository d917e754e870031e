#pragma once
// Block layouts of the 32-value ("basic", non-K) quantized formats (MXFP4 among them) and of IQ4_XS, byte for byte as
// ggml stores them in GGUF tensors (little-endian). Every field is a byte array or a 2-byte half, so the structs have
// no padding; the static asserts pin the sizes to ggml's (kernels/ggml_type.cpp holds the same numbers,
// tests/kernels/quant_basic_test.cpp checks that they agree). Blocks inside a row need not be aligned, so the
// codecs copy them in and out with load_block / store_block instead of casting pointers.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/half.h"
#include "kernels/quant/block_io.h"

namespace infertune::basic_quant {

// Values per block: QK4_0 = QK4_1 = QK5_0 = QK5_1 = QK8_0 = QK8_1 = QK4_NL = QK_MXFP4.
inline constexpr int kBlock = 32;
inline constexpr int kSuperBlock = 256;  // values per IQ4_XS block (QK_K)

// Nibble order shared by the 4-bit formats: qs[j] holds value j in its low nibble and value j + 16 in its
// high nibble.

// value = (q - 8) * d, q in [0, 15].
struct BlockQ4_0 {
  f16_t d;
  uint8_t qs[kBlock / 2];
};

// value = q * d + m, q in [0, 15].
struct BlockQ4_1 {
  f16_t d;
  f16_t m;
  uint8_t qs[kBlock / 2];
};

// value = (q - 16) * d, q in [0, 31]: low 4 bits in qs (as Q4_0), bit 4 of value j is bit j of qh (a
// little-endian uint32).
struct BlockQ5_0 {
  f16_t d;
  uint8_t qh[4];
  uint8_t qs[kBlock / 2];
};

// value = q * d + m, q in [0, 31], bits split as in Q5_0.
struct BlockQ5_1 {
  f16_t d;
  f16_t m;
  uint8_t qh[4];
  uint8_t qs[kBlock / 2];
};

// value = q * d.
struct BlockQ8_0 {
  f16_t d;
  int8_t qs[kBlock];
};

// value = q * d; s = d * sum(q), kept so that dot products against offset formats (Q4_1, Q5_1) can apply
// the offset once per block.
struct BlockQ8_1 {
  f16_t d;
  f16_t s;
  int8_t qs[kBlock];
};

// value = d * kIq4Values[q], q in [0, 15], nibbles as Q4_0.
struct BlockIq4Nl {
  f16_t d;
  uint8_t qs[kBlock / 2];
};

// MXFP4 (OCP microscaling FP4, gpt-oss's expert weights): value = mxfp4_scale(e) * kMxfp4Values[q], q in
// [0, 15], nibbles as Q4_0. e is an E8M0 exponent: a power of two, no mantissa, no sign.
struct BlockMxfp4 {
  uint8_t e;
  uint8_t qs[kBlock / 2];
};

// 8 sub-blocks of 32: value = d * (ls - 32) * kIq4Values[q], with a 6-bit sub-block scale ls whose low
// nibble is nibble (ib % 2) of scales_l[ib / 2] and whose top 2 bits are bits 2*ib, 2*ib+1 of scales_h.
// qs holds the sub-blocks one after another, 16 bytes each, nibbles as Q4_0.
struct BlockIq4Xs {
  f16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kSuperBlock / 64];
  uint8_t qs[kSuperBlock / 2];
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockIq4Nl) == 18);
static_assert(sizeof(BlockMxfp4) == 17);
static_assert(sizeof(BlockIq4Xs) == 136);

// The non-linear 4-bit codebook of IQ4_NL and IQ4_XS (ggml's kvalues_iq4nl), ascending.
inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// The E2M1 (FP4) values doubled, so that they are integers (ggml's kvalues_mxfp4): codes 0-7 are +0, 0.5, 1,
// 1.5, 2, 3, 4, 6 times two, codes 8-15 the same negated (code 8, E2M1 -0, holds a plain 0).
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// The scale that an MXFP4 block's exponent e gives the doubled codebook: 2^(e - 128), half of E8M0's
// 2^(e - 127) to undo the doubling (ggml's GGML_E8M0_TO_FP32_HALF). Exact for every e: e = 0 and 1 are the
// float subnormals 2^-128 and 2^-127, e = 255 (E8M0's NaN) is read as 2^127, as ggml reads it.
inline float mxfp4_scale(uint8_t e) {
  const uint32_t bits = e < 2 ? uint32_t{0x00200000} << e : static_cast<uint32_t>(e - 1) << 23;
  return std::bit_cast<float>(bits);
}

// The 4-bit code of value j (0 <= j < 32) of a 16-byte nibble array.
inline int nibble(const uint8_t* qs, int j) { return j < kBlock / 2 ? qs[j] & 0xF : qs[j - kBlock / 2] >> 4; }

//   codes: [32] each < 16   qs: [16]
inline void pack_nibbles(const uint8_t* codes, uint8_t* qs) {
  for (int j = 0; j < kBlock / 2; ++j) qs[j] = static_cast<uint8_t>(codes[j] | (codes[j + kBlock / 2] << 4));
}

// Q5_0 / Q5_1 fifth bits: bit j of the little-endian uint32 qh is bit 4 of value j's code.
inline uint32_t read_high_bits(const uint8_t* qh) {
  return qh[0] | (uint32_t{qh[1]} << 8) | (uint32_t{qh[2]} << 16) | (uint32_t{qh[3]} << 24);
}

//   codes: [32] each < 32   qs: [16]   qh: [4]
inline void pack_5bit_codes(const uint8_t* codes, uint8_t* qs, uint8_t* qh) {
  uint8_t low[kBlock];
  uint32_t high = 0;
  for (int j = 0; j < kBlock; ++j) {
    low[j] = codes[j] & 0xF;
    high |= static_cast<uint32_t>(codes[j] >> 4) << j;
  }
  pack_nibbles(low, qs);
  for (int i = 0; i < 4; ++i) qh[i] = static_cast<uint8_t>(high >> (8 * i));
}

using infertune::load_block;
using infertune::store_block;

}  // namespace infertune::basic_quant
