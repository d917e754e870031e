#pragma once
// The 32-value weight formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4) as traits the x86 kernels share:
// how to get a block's codes and its scale and offset. Included ONLY after an ISA unit's `#pragma GCC target` (see
// x86_dot_kernels.h).
//
// Every block's product with a q8 activation block (scale dx, codes x, code sum S) is computed as
//   I = dot(codes, x) + kCodeOffset * S           an exact integer
//   acc = fma(float(I), d * dx, acc)
//   acc = fma(m, dx * S, acc)                      only formats with a float min (Q4_1, Q5_1: kHasMin)
// in this order, by the matrix-vector kernels (one row per lane) and the tiled kernels (one token per lane)
// alike, so a token's result is the same bits whatever batch it is computed in. Codes are unsigned where
// the kernels can multiply them as such, which saves the sign trick:
//   - always for the nibble formats (Q4_0: code q, kCodeOffset -8; Q5_0: -16; Q4_1 / Q5_1: 0, min m; MXFP4:
//     codebook value + 12, kCodeOffset -12);
//   - for Q8_0 and IQ4_NL only when the Isa's byte dot product does not saturate (Isa::kWideUnsigned,
//     VNNI): code = q + 128 and kCodeOffset -128. Otherwise (AVX2's maddubs sums pairs of u8 * s8 into
//     int16) their codes stay signed, kCodeOffset 0, and kernels multiply them with the sign trick.
// Either way I is the same integer. Each traits struct has:
//   kBytes                        bytes per block (its f16 d first, then for kHasMin the f16 m; MXFP4: its
//                                 E8M0 exponent first, read by F::scale)
//   kSigned<Isa>, kCodeOffset<Isa>, kHasMin
//   codes<Isa>(blk)               the block's 32 codes in value order
//   pair_codes<Isa>(b0, b1, lo, hi)  lo = [codes 0-15 of b0 | codes 0-15 of b1], hi the same for 16-31
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/matmul/avx2/x86_simd_helpers.h"
#include "kernels/quant/blocks_basic.h"

namespace infertune::x86 {
namespace {

inline uint16_t u16_at(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// The f16 at p + i * kStride for i < 8, as floats.
template <size_t kStride>
inline __m256 halves8(const uint8_t* p) {
  uint64_t lo = 0, hi = 0;
  for (int i = 0; i < 4; ++i) {
    lo |= static_cast<uint64_t>(u16_at(p + i * kStride)) << (16 * i);
    hi |= static_cast<uint64_t>(u16_at(p + (i + 4) * kStride)) << (16 * i);
  }
  return _mm256_cvtph_ps(_mm_set_epi64x(static_cast<long long>(hi), static_cast<long long>(lo)));
}

// Nibbles of two blocks' qs[16]: lo = low nibbles of b0 | of b1 (codes 0-15), hi = high nibbles (16-31).
inline void pair_nibbles(const uint8_t* qs0, const uint8_t* qs1, __m256i& lo, __m256i& hi) {
  const __m256i raw = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(qs0)), load128(qs1), 1);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  lo = _mm256_and_si256(raw, low4);
  hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
}

// The fifth bits of two Q5 blocks (qh: little-endian uint32, bit j = value j) added as 16 to the codes of
// pair_nibbles' lo and hi. Isa::bit_bytes(bits, v): byte j = v where bit j is set, else 0.
template <class Isa>
inline void pair_fifth_bits(const uint8_t* qh0, const uint8_t* qh1, __m256i& lo, __m256i& hi) {
  const uint32_t a = u32_at(qh0), b = u32_at(qh1);
  const __m256i bit = _mm256_set1_epi8(0x10);
  lo = _mm256_or_si256(lo, Isa::bit_bytes((a & 0xFFFFu) | (b << 16), bit));
  hi = _mm256_or_si256(hi, Isa::bit_bytes((a >> 16) | (b & 0xFFFF0000u), bit));
}

// The 5-bit codes of a Q5_0 / Q5_1 block: nibbles plus 16 where the qh bit is set.
template <class Isa>
inline __m256i q5_codes(const uint8_t* qh, const uint8_t* qs) {
  return _mm256_or_si256(unpack_nibbles(qs), Isa::bit_bytes(u32_at(qh), _mm256_set1_epi8(0x10)));
}

// Codes that were made unsigned by adding 128 (flipping the sign bit).
inline __m256i flip_sign_bits(__m256i v) { return _mm256_xor_si256(v, _mm256_set1_epi8(static_cast<char>(0x80))); }

// Q4_0 (18 bytes: f16 d, qs[16]): value (q - 8) * d.
struct Q4_0Format {
  static constexpr size_t kBytes = 18;
  static constexpr bool kHasMin = false;
  static constexpr int kMaxCode = 15;  // unsigned codes 0..kMaxCode (pair_dot sums them in int16)
  template <class Isa>
  static constexpr int kCodeOffset = -8;
  template <class Isa>
  static constexpr bool kSigned = false;
  template <class Isa>
  static __m256i codes(const uint8_t* blk) {
    return unpack_nibbles(blk + 2);
  }
  template <class Isa>
  static void pair_codes(const uint8_t* b0, const uint8_t* b1, __m256i& lo, __m256i& hi) {
    pair_nibbles(b0 + 2, b1 + 2, lo, hi);
  }
};

// Q4_1 (20 bytes: f16 d, f16 m, qs[16]): value q * d + m.
struct Q4_1Format {
  static constexpr size_t kBytes = 20;
  static constexpr bool kHasMin = true;
  static constexpr int kMaxCode = 15;  // unsigned codes 0..kMaxCode (pair_dot sums them in int16)
  template <class Isa>
  static constexpr int kCodeOffset = 0;
  template <class Isa>
  static constexpr bool kSigned = false;
  template <class Isa>
  static __m256i codes(const uint8_t* blk) {
    return unpack_nibbles(blk + 4);
  }
  template <class Isa>
  static void pair_codes(const uint8_t* b0, const uint8_t* b1, __m256i& lo, __m256i& hi) {
    pair_nibbles(b0 + 4, b1 + 4, lo, hi);
  }
};

// Q5_0 (22 bytes: f16 d, qh[4], qs[16]): value (q - 16) * d.
struct Q5_0Format {
  static constexpr size_t kBytes = 22;
  static constexpr bool kHasMin = false;
  static constexpr int kMaxCode = 31;  // unsigned codes 0..kMaxCode (pair_dot sums them in int16)
  template <class Isa>
  static constexpr int kCodeOffset = -16;
  template <class Isa>
  static constexpr bool kSigned = false;
  template <class Isa>
  static __m256i codes(const uint8_t* blk) {
    return q5_codes<Isa>(blk + 2, blk + 6);
  }
  template <class Isa>
  static void pair_codes(const uint8_t* b0, const uint8_t* b1, __m256i& lo, __m256i& hi) {
    pair_nibbles(b0 + 6, b1 + 6, lo, hi);
    pair_fifth_bits<Isa>(b0 + 2, b1 + 2, lo, hi);
  }
};

// Q5_1 (24 bytes: f16 d, f16 m, qh[4], qs[16]): value q * d + m.
struct Q5_1Format {
  static constexpr size_t kBytes = 24;
  static constexpr bool kHasMin = true;
  static constexpr int kMaxCode = 31;  // unsigned codes 0..kMaxCode (pair_dot sums them in int16)
  template <class Isa>
  static constexpr int kCodeOffset = 0;
  template <class Isa>
  static constexpr bool kSigned = false;
  template <class Isa>
  static __m256i codes(const uint8_t* blk) {
    return q5_codes<Isa>(blk + 4, blk + 8);
  }
  template <class Isa>
  static void pair_codes(const uint8_t* b0, const uint8_t* b1, __m256i& lo, __m256i& hi) {
    pair_nibbles(b0 + 8, b1 + 8, lo, hi);
    pair_fifth_bits<Isa>(b0 + 4, b1 + 4, lo, hi);
  }
};

// Q8_0 (34 bytes: f16 d, int8 qs[32]): value q * d.
struct Q8_0Format {
  static constexpr size_t kBytes = 34;
  template <class Isa>
  static constexpr bool kSigned = !Isa::kWideUnsigned;
  static constexpr bool kHasMin = false;
  template <class Isa>
  static constexpr int kCodeOffset = kSigned<Isa> ? 0 : -128;
  template <class Isa>
  static __m256i codes(const uint8_t* blk) {
    const __m256i q = load256(blk + 2);
    return kSigned<Isa> ? q : flip_sign_bits(q);
  }
  template <class Isa>
  static void pair_codes(const uint8_t* b0, const uint8_t* b1, __m256i& lo, __m256i& hi) {
    const __m256i q0 = load256(b0 + 2), q1 = load256(b1 + 2);
    lo = _mm256_permute2x128_si256(q0, q1, 0x20);
    hi = _mm256_permute2x128_si256(q0, q1, 0x31);
    if constexpr (!kSigned<Isa>) {
      lo = flip_sign_bits(lo);
      hi = flip_sign_bits(hi);
    }
  }
};

// The IQ4 codebook in both 128-bit lanes, for byte lookups by nibble; `flip`: plus 128 (as unsigned).
inline __m256i iq4_table(bool flip = false) {
  const __m256i t = _mm256_broadcastsi128_si256(load128(basic_quant::kIq4Values));
  return flip ? flip_sign_bits(t) : t;
}

// The codebook formats' codes: each nibble of the 16 bytes at qs looked up in `table` (a 16-byte codebook in both
// 128-bit lanes); one block's codes, or a pair's as pair_nibbles lays them out.
inline __m256i codebook_codes(__m256i table, const uint8_t* qs) {
  return _mm256_shuffle_epi8(table, unpack_nibbles(qs));
}
inline void codebook_pair_codes(__m256i table, const uint8_t* qs0, const uint8_t* qs1, __m256i& lo, __m256i& hi) {
  pair_nibbles(qs0, qs1, lo, hi);
  lo = _mm256_shuffle_epi8(table, lo);
  hi = _mm256_shuffle_epi8(table, hi);
}

// IQ4_NL (18 bytes: f16 d, qs[16]): value d * kIq4Values[q].
struct Iq4NlFormat {
  static constexpr size_t kBytes = 18;
  template <class Isa>
  static constexpr bool kSigned = !Isa::kWideUnsigned;
  static constexpr bool kHasMin = false;
  template <class Isa>
  static constexpr int kCodeOffset = kSigned<Isa> ? 0 : -128;
  template <class Isa>
  static __m256i codes(const uint8_t* blk) {
    return codebook_codes(iq4_table(!kSigned<Isa>), blk + 2);
  }
  template <class Isa>
  static void pair_codes(const uint8_t* b0, const uint8_t* b1, __m256i& lo, __m256i& hi) {
    codebook_pair_codes(iq4_table(!kSigned<Isa>), b0 + 2, b1 + 2, lo, hi);
  }
};

// Eight E8M0 exponents (int32 lanes) as the floats 2^(e - 128): (e - 1) << 23 is that float's bit pattern for
// e >= 2; e = 0 and 1 are the subnormals 2^-128 and 2^-127, bit patterns 0x00200000 << e.
inline __m256 e8m0_to_half_scale(__m256i e) {
  const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
  const __m256i subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
  const __m256i is_normal = _mm256_cmpgt_epi32(e, _mm256_set1_epi32(1));
  return _mm256_castsi256_ps(_mm256_blendv_epi8(subnormal, normal, is_normal));
}

// The 8 E8M0 exponent bytes at e as 8 floats 2^(e - 128): the scales of 8 rows' MXFP4 blocks.
inline __m256 e8m0_to_half_scales8(const uint8_t* e) {
  return e8m0_to_half_scale(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(e))));
}

// MXFP4 (17 bytes: E8M0 e, qs[16]): value mxfp4_scale(e) * kMxfp4Values[q]. The codebook's magnitudes are at
// most 12, so its values plus 12 are unsigned codes small enough for every Isa's byte dot (maddubs too).
// The codebook plus 12, in both 128-bit lanes for the byte shuffle.
alignas(16) inline constexpr uint8_t kMxfp4ShiftedCodes[16] = {12, 13, 14, 15, 16, 18, 20, 24,
                                                               12, 11, 10, 9,  8,  6,  4,  0};
static_assert([] {
  for (int i = 0; i < 16; ++i) {
    if (kMxfp4ShiftedCodes[i] != basic_quant::kMxfp4Values[i] + 12) return false;
  }
  return true;
}());
inline __m256i mxfp4_table() { return _mm256_broadcastsi128_si256(load128(kMxfp4ShiftedCodes)); }

struct Mxfp4Format {
  static constexpr size_t kBytes = 17;
  static constexpr bool kHasMin = false;
  static constexpr int kMaxCode = 24;  // unsigned codes 0..kMaxCode (pair_dot sums them in int16)
  template <class Isa>
  static constexpr int kCodeOffset = -12;
  template <class Isa>
  static constexpr bool kSigned = false;
  // The block scale, which is not an f16 here (see block_scale).
  static float scale(const uint8_t* blk) { return basic_quant::mxfp4_scale(blk[0]); }
  template <class Isa>
  static __m256i codes(const uint8_t* blk) {
    return codebook_codes(mxfp4_table(), blk + 1);
  }
  template <class Isa>
  static void pair_codes(const uint8_t* b0, const uint8_t* b1, __m256i& lo, __m256i& hi) {
    codebook_pair_codes(mxfp4_table(), b0 + 1, b1 + 1, lo, hi);
  }
};

// Formats whose block scale is not the f16 at the block's start (MXFP4) decode it with F::scale(blk); the
// matrix-vector kernels decode a group of rows' scales at once (RowLanes::e8m0_halves, MXFP4's E8M0 rule).
template <class F>
inline constexpr bool kCustomScale = requires(const uint8_t* blk) {
  F::scale(blk);
};

// Block blk's scale d as a float.
template <class F>
inline float block_scale(const uint8_t* blk) {
  if constexpr (kCustomScale<F>) {
    return F::scale(blk);
  } else {
    return half_at(blk);
  }
}

}  // namespace
}  // namespace infertune::x86
