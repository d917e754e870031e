#pragma once
// The 256-value weight formats (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS) as traits the x86 kernels share.
// Included ONLY after an ISA unit's `#pragma GCC target` (see x86_dot_kernels.h).
//
// Every super-block's product with a q8_K activation block (scale dx, codes x, group sums S) is computed as
//   acc = fma(float(I), d * dx, acc)                 I: an exact integer (sub-block scales and the offsets
//                                                       that are integer multiples of d folded in)
//   acc = fma(float(M), (-dmin) * dx, acc)           formats with a separate min (Q2_K, Q4_K, Q5_K)
// in this order, by the matrix-vector kernels (one row per lane) and the tiled kernels (one token per lane)
// alike, so a token's result is the same bits whatever batch it is computed in. Each traits struct has:
//   kBytes, kSub                 bytes per super-block; values per integer sub-block scale (16 or 32)
//   kDOffset, kDminOffset        byte offsets of the f16 d and dmin (-1: no separate min)
//   sums<Isa, T>(w, x, I, M)     the integer terms of one super-block w with T activation blocks x[t], as
//                                8-lane vectors whose lane sums are I[t] and M[t]: each code vector is
//                                unpacked once and multiplied with every token's codes (small batches)
// and for the tiled kernels (x86_tile_kernels.h), which get S from the activation panels as int16 pairs:
//   kPairValues<Isa>             values per coefficient pair (32: pairs of 16-value groups, 64: of 32-value
//                                groups; 0: no offset term)
//   kFold<Isa>                   0: the coefficient sum is M; else I += kFold * (coefficient sum)
//   kSigned<Isa>                 codes are signed (AVX2 IQ4_XS: maddubs saturates on codebook + 128)
//   unpack<Isa>(w, codes, scales, coefs, d, neg_dmin)   codes [256] in value order, scales [256 / kSub],
//                                coefs [256 / kPairValues] (two int16, low first), d, -dmin
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/matmul/avx2/x86_q8_formats.h"
#include "kernels/matmul/avx2/x86_simd_helpers.h"
#include "kernels/quant/blocks_k.h"

namespace infertune::x86 {
namespace {

using kquant::BlockQ8K;

inline void store256(uint8_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }

// Two int16 in one int32, a low: the operand layout of VPMADDWD.
inline int32_t int16_pair(int a, int b) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint16_t>(a)) |
                              (static_cast<uint32_t>(static_cast<uint16_t>(b)) << 16));
}

// The 8 6-bit scales and 8 6-bit mins of Q4_K / Q5_K from their 12 packed bytes, as byte arrays (sc: [8],
// mn: [8]). Scales/mins 0-3 are the low 6 bits of bytes 0-3 / 4-7; 4-7 take their low nibble from bytes
// 8-11 (scale: low nibble, min: high nibble) and their top 2 bits from the top of bytes 0-3 / 4-7.
inline void unpack_scales_mins(const uint8_t* packed, uint8_t* sc, uint8_t* mn) {
  uint32_t u[3];
  std::memcpy(u, packed, 12);
  const uint32_t s_lo = u[0] & 0x3f3f3f3fu;
  const uint32_t m_lo = u[1] & 0x3f3f3f3fu;
  const uint32_t s_hi = (u[2] & 0x0f0f0f0fu) | (((u[0] >> 6) & 0x03030303u) << 4);
  const uint32_t m_hi = ((u[2] >> 4) & 0x0f0f0f0fu) | (((u[1] >> 6) & 0x03030303u) << 4);
  std::memcpy(sc, &s_lo, 4);
  std::memcpy(sc + 4, &s_hi, 4);
  std::memcpy(mn, &m_lo, 4);
  std::memcpy(mn + 4, &m_hi, 4);
}

// Int16 word j of a 128-bit lane to every word (both lanes).
inline __m256i word_pick(int j) {
  const char a = static_cast<char>(2 * j);
  return _mm256_setr_epi8(a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a,
                          a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1);
}

// Broadcast masks for 16-value sub-blocks: code vector k of a 128-value half (values 32k..32k+31) spans
// sub-blocks 2k (bytes 0-15) and 2k + 1 (bytes 16-31); pair_pick(k) takes int16 word 2k of a 128-bit lane to
// every word of the low lane and word 2k + 1 to every word of the high lane.
inline __m256i pair_pick(int k) {
  const char a = static_cast<char>(4 * k), b = static_cast<char>(4 * k + 2);
  return _mm256_setr_epi8(a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, b, b + 1, b,
                          b + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1);
}

// Int16 scales of sub-blocks 8h..8h+7 (of a [16] int16 vector) in both 128-bit lanes.
inline __m256i half_scales(__m256i scales16, int h) {
  return _mm256_broadcastsi128_si256(h == 0 ? _mm256_castsi256_si128(scales16) : _mm256_extracti128_si256(scales16, 1));
}

// Q3_K's 16 signed scales (6 bits biased by 32) as int16 [16]: low nibbles of 0-7 in bytes 0-7, of 8-15 in
// the high nibbles of bytes 0-7; the top 2 bits of scale j at bit 2 * (j / 4) of byte 8 + j % 4. Done four
// scales per 32-bit word.
inline __m256i q3_scales16(const uint8_t* packed) {
  uint32_t u[3];
  std::memcpy(u, packed, 12);
  const uint32_t nib = 0x0f0f0f0fu, two = 0x03030303u;
  const uint32_t s0 = (u[0] & nib) | ((u[2] & two) << 4);
  const uint32_t s1 = (u[1] & nib) | (((u[2] >> 2) & two) << 4);
  const uint32_t s2 = ((u[0] >> 4) & nib) | (((u[2] >> 4) & two) << 4);
  const uint32_t s3 = ((u[1] >> 4) & nib) | (((u[2] >> 6) & two) << 4);
  const __m128i biased =
      _mm_setr_epi32(static_cast<int>(s0), static_cast<int>(s1), static_cast<int>(s2), static_cast<int>(s3));
  return _mm256_cvtepi8_epi16(_mm_sub_epi8(biased, _mm_set1_epi8(32)));
}

// The codes of Q4_K / Q5_K chunk c (values 64c..64c+63) as two vectors in value order.
inline void q4k_chunk(const uint8_t* qs, int c, __m256i& lo, __m256i& hi) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i q = load256(qs + 32 * c);
  lo = _mm256_and_si256(q, low4);
  hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
}

// Q5_K's fifth bits for chunk c, from qh (bit 2c of qh[l] for value 64c + l, bit 2c + 1 for 64c + 32 + l).
inline void q5k_high_bits(const uint8_t* qh, int c, __m256i& lo, __m256i& hi) {
  const __m256i one = _mm256_set1_epi8(1);
  const __m256i high = _mm256_srli_epi16(load256(qh), 2 * c);
  lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(high, one), 4));
  hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 1), one), 4));
}

// The 8 scales of Q4_K / Q5_K as int16 in both lanes, and the mins as int16 pairs m0 m0 m1 m1 .. to multiply
// (madd) with the 16 group sums S16.
inline __m256i q4k_scales_and_mins(const uint8_t* w, __m256i& mins16) {
  uint8_t sc[8], mn[8];
  unpack_scales_mins(w + 4, sc, mn);
  const __m128i mins8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(mn));
  mins16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mins8, mins8));
  return _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc))));
}

// I[t] += the scaled dot of one code vector with token t's 32 codes at byte `at` of its q8_K block.
template <class Isa, int T>
inline void dot_tokens(__m256i (&I)[T], __m256i codes, const BlockQ8K* const (&x)[T], size_t at, __m256i scale16) {
  for (int t = 0; t < T; ++t) I[t] = Isa::dot_scaled(I[t], codes, load256(x[t]->qs + at), scale16);
}

// out[t] = madd(S16 of token t, coefs): per-group offsets or min terms, 8 lanes.
template <int T>
inline void group_sum_terms(__m256i (&out)[T], const BlockQ8K* const (&x)[T], __m256i coefs16) {
  for (int t = 0; t < T; ++t) out[t] = _mm256_madd_epi16(load256(x[t]->bsums), coefs16);
}

// The 16-value-group formats (Q2_K, Q3_K, Q6_K): half h's four code vectors (kHalf(w, h, q)) dotted with every
// token, sub-block scales from scales16 [16].
template <class Isa, int T, auto kHalf>
inline void group16_dots(const uint8_t* w, __m256i scales16, const BlockQ8K* const (&x)[T], __m256i (&I)[T]) {
  for (int t = 0; t < T; ++t) I[t] = _mm256_setzero_si256();
  for (int h = 0; h < 2; ++h) {
    const __m256i hs = half_scales(scales16, h);
    __m256i q[4];
    kHalf(w, h, q);
    for (int k = 0; k < 4; ++k) dot_tokens<Isa, T>(I, q[k], x, 128 * h + 32 * k, _mm256_shuffle_epi8(hs, pair_pick(k)));
  }
}

inline void q4k_unpack_scales(const uint8_t* w, int32_t* scales, int32_t* coefs, float& d, float& neg_dmin) {
  uint8_t sc[8], mn[8];
  unpack_scales_mins(w + 4, sc, mn);
  for (int j = 0; j < 8; ++j) scales[j] = sc[j];
  for (int k = 0; k < 4; ++k) coefs[k] = int16_pair(mn[2 * k], mn[2 * k + 1]);
  d = half_at(w);
  neg_dmin = -half_at(w + 2);
}

// Q4_K (144 bytes: f16 d, f16 dmin, scales[12], qs[128]): value d * sc[j] * q - dmin * m[j] per 32-value
// sub-block j; M = sum_j m[j] * (sum of sub-block j's activation codes).
// Q5_K (176 bytes: f16 d, f16 dmin, scales[12], qh[32], qs[128]): Q4_K with a fifth code bit from qh.
// One template serves both: they differ only in where qs starts and in the fifth bit.
template <bool kFifthBit>
struct Q45KFormat {
  static constexpr size_t kBytes = kFifthBit ? 176 : 144, kSub = 32;
  static constexpr int kDOffset = 0, kDminOffset = 2;
  template <class Isa>
  static constexpr size_t kPairValues = 64;
  template <class Isa>
  static constexpr int kFold = 0;
  template <class Isa>
  static constexpr bool kSigned = false;

  // The codes of chunk c (values 64c..64c+63) as two 32-value vectors.
  static void chunk(const uint8_t* w, int c, __m256i& lo, __m256i& hi) {
    if constexpr (kFifthBit) {
      q4k_chunk(w + 48, c, lo, hi);
      q5k_high_bits(w + 16, c, lo, hi);
    } else {
      q4k_chunk(w + 16, c, lo, hi);
    }
  }

  template <class Isa, int T>
  static void sums(const uint8_t* w, const BlockQ8K* const (&x)[T], __m256i (&I)[T], __m256i (&M)[T]) {
    __m256i mins16;
    const __m256i scales16 = q4k_scales_and_mins(w, mins16);
    group_sum_terms<T>(M, x, mins16);
    for (int t = 0; t < T; ++t) I[t] = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      __m256i lo, hi;
      chunk(w, c, lo, hi);
      dot_tokens<Isa, T>(I, lo, x, 64 * c, _mm256_shuffle_epi8(scales16, word_pick(2 * c)));
      dot_tokens<Isa, T>(I, hi, x, 64 * c + 32, _mm256_shuffle_epi8(scales16, word_pick(2 * c + 1)));
    }
  }
  template <class Isa>
  static void unpack(const uint8_t* w, uint8_t* codes, int32_t* scales, int32_t* coefs, float& d, float& neg_dmin) {
    q4k_unpack_scales(w, scales, coefs, d, neg_dmin);
    for (int c = 0; c < 4; ++c) {
      __m256i lo, hi;
      chunk(w, c, lo, hi);
      store256(codes + 64 * c, lo);
      store256(codes + 64 * c + 32, hi);
    }
  }
};
using Q4KFormat = Q45KFormat<false>;
using Q5KFormat = Q45KFormat<true>;

// Q6_K's codes of half h (values 128h..128h+127) as four vectors in value order, unsigned 0..63: low
// nibbles from ql, bits 4-5 from qh's bit pairs 0-1, 2-3, 4-5, 6-7 (two masks, so few registers).
inline void q6k_half(const uint8_t* w, int h, __m256i (&q)[4]) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i bits45 = _mm256_set1_epi8(0x30);
  const __m256i ql0 = load256(w + 64 * h);
  const __m256i ql1 = load256(w + 64 * h + 32);
  const __m256i qh = load256(w + 128 + 32 * h);
  q[0] = _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits45));
  q[1] = _mm256_or_si256(_mm256_and_si256(ql1, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), bits45));
  q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4), _mm256_and_si256(qh, bits45));
  q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                         _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits45));
}

// Q6_K (210 bytes: ql[128], qh[64], int8 scales[16], f16 d): value d * sc[g] * (q - 32) per 16-value group
// g; I = sum_g sc[g] * (sum q x - 32 S16[g]).
struct Q6KFormat {
  static constexpr size_t kBytes = 210, kSub = 16;
  static constexpr int kDOffset = 208, kDminOffset = -1;
  template <class Isa>
  static constexpr size_t kPairValues = 32;
  template <class Isa>
  static constexpr int kFold = -32;
  template <class Isa>
  static constexpr bool kSigned = false;

  template <class Isa, int T>
  static void sums(const uint8_t* w, const BlockQ8K* const (&x)[T], __m256i (&I)[T], __m256i (&M)[T]) {
    const __m256i scales16 = _mm256_cvtepi8_epi16(load128(w + 192));  // [16] group scales
    group16_dots<Isa, T, q6k_half>(w, scales16, x, I);
    group_sum_terms<T>(M, x, scales16);  // the offsets, then no min term
    for (int t = 0; t < T; ++t) {
      I[t] = _mm256_sub_epi32(I[t], _mm256_slli_epi32(M[t], 5));
      M[t] = _mm256_setzero_si256();
    }
  }
  template <class Isa>
  static void unpack(const uint8_t* w, uint8_t* codes, int32_t* scales, int32_t* coefs, float& d, float& neg_dmin) {
    const auto* sc = reinterpret_cast<const int8_t*>(w + 192);
    for (int g = 0; g < 16; ++g) scales[g] = sc[g];
    for (int k = 0; k < 8; ++k) coefs[k] = int16_pair(sc[2 * k], sc[2 * k + 1]);
    d = half_at(w + 208);
    neg_dmin = 0;
    for (int h = 0; h < 2; ++h) {
      __m256i q[4];
      q6k_half(w, h, q);
      for (int k = 0; k < 4; ++k) store256(codes + 128 * h + 32 * k, q[k]);
    }
  }
};

// Q3_K's codes of half h as four vectors in value order (0..7): 2 low bits + 4 * (bit 4h + k of hmask[l]).
inline void q3k_half(const uint8_t* w, int h, __m256i (&q)[4]) {
  const __m256i low2 = _mm256_set1_epi8(3);
  const __m256i one = _mm256_set1_epi8(1);
  const __m256i bits = load256(w + 32 + 32 * h);
  const __m256i high = load256(w);
  for (int k = 0; k < 4; ++k) {
    const __m256i hbit = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 4 * h + k), one), 2);
    q[k] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(bits, 2 * k), low2), hbit);
  }
}

// Q3_K (110 bytes: hmask[32], qs[64], scales[12], f16 d): value d * sc[g] * (q - 4) per 16-value group;
// I = sum_g sc[g] * (sum q x - 4 S16[g]).
struct Q3KFormat {
  static constexpr size_t kBytes = 110, kSub = 16;
  static constexpr int kDOffset = 108, kDminOffset = -1;
  template <class Isa>
  static constexpr size_t kPairValues = 32;
  template <class Isa>
  static constexpr int kFold = -4;
  template <class Isa>
  static constexpr bool kSigned = false;

  template <class Isa, int T>
  static void sums(const uint8_t* w, const BlockQ8K* const (&x)[T], __m256i (&I)[T], __m256i (&M)[T]) {
    const __m256i scales16 = q3_scales16(w + 96);
    group16_dots<Isa, T, q3k_half>(w, scales16, x, I);
    group_sum_terms<T>(M, x, scales16);  // the offsets, then no min term
    for (int t = 0; t < T; ++t) {
      I[t] = _mm256_sub_epi32(I[t], _mm256_slli_epi32(M[t], 2));
      M[t] = _mm256_setzero_si256();
    }
  }
  template <class Isa>
  static void unpack(const uint8_t* w, uint8_t* codes, int32_t* scales, int32_t* coefs, float& d, float& neg_dmin) {
    int16_t sc[16];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sc), q3_scales16(w + 96));
    for (int g = 0; g < 16; ++g) scales[g] = sc[g];
    for (int k = 0; k < 8; ++k) coefs[k] = int16_pair(sc[2 * k], sc[2 * k + 1]);
    d = half_at(w + 108);
    neg_dmin = 0;
    for (int h = 0; h < 2; ++h) {
      __m256i q[4];
      q3k_half(w, h, q);
      for (int k = 0; k < 4; ++k) store256(codes + 128 * h + 32 * k, q[k]);
    }
  }
};

// Q2_K's codes of half h as four vectors in value order (0..3): bits 2k, 2k + 1 of qs[32h + l].
inline void q2k_half(const uint8_t* w, int h, __m256i (&q)[4]) {
  const __m256i bits = load256(w + 16 + 32 * h);
  for (int k = 0; k < 4; ++k) q[k] = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * k), _mm256_set1_epi8(3));
}

// Q2_K (84 bytes: scales[16], qs[64], f16 d, f16 dmin): value d * (sc & 15) * q - dmin * (sc >> 4) per
// 16-value group; M = sum_g (sc[g] >> 4) * S16[g].
struct Q2KFormat {
  static constexpr size_t kBytes = 84, kSub = 16;
  static constexpr int kDOffset = 80, kDminOffset = 82;
  template <class Isa>
  static constexpr size_t kPairValues = 32;
  template <class Isa>
  static constexpr int kFold = 0;
  template <class Isa>
  static constexpr bool kSigned = false;

  template <class Isa, int T>
  static void sums(const uint8_t* w, const BlockQ8K* const (&x)[T], __m256i (&I)[T], __m256i (&M)[T]) {
    const __m128i packed = load128(w);
    const __m128i low4 = _mm_set1_epi8(0x0F);
    const __m256i scales16 = _mm256_cvtepu8_epi16(_mm_and_si128(packed, low4));
    group_sum_terms<T>(M, x, _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), low4)));
    group16_dots<Isa, T, q2k_half>(w, scales16, x, I);
  }
  template <class Isa>
  static void unpack(const uint8_t* w, uint8_t* codes, int32_t* scales, int32_t* coefs, float& d, float& neg_dmin) {
    for (int g = 0; g < 16; ++g) scales[g] = w[g] & 15;
    for (int k = 0; k < 8; ++k) coefs[k] = int16_pair(w[2 * k] >> 4, w[2 * k + 1] >> 4);
    d = half_at(w + 80);
    neg_dmin = -half_at(w + 82);
    for (int h = 0; h < 2; ++h) {
      __m256i q[4];
      q2k_half(w, h, q);
      for (int k = 0; k < 4; ++k) store256(codes + 128 * h + 32 * k, q[k]);
    }
  }
};

// The 6-bit scale of IQ4_XS sub-block ib, minus 32.
inline int iq4xs_scale(const uint8_t* w, int ib) {
  const unsigned scales_h = u16_at(w + 2);
  return (((w[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4)) - 32;
}

// IQ4_XS (136 bytes: f16 d, u16 scales_h, scales_l[4], qs[128]): value d * (ls - 32) * kIq4Values[q] per
// 32-value sub-block. The matrix-vector kernel multiplies the signed codebook values with the sign trick.
// Tiled with a non-saturating byte dot (Isa::kWideUnsigned) the codes are kIq4Values + 128, and
// I += sum_j -128 (ls_j - 32) S32[j] puts the 128 back; otherwise the codes stay signed.
struct Iq4XsFormat {
  static constexpr size_t kBytes = 136, kSub = 32;
  static constexpr int kDOffset = 0, kDminOffset = -1;
  template <class Isa>
  static constexpr bool kSigned = !Isa::kWideUnsigned;
  template <class Isa>
  static constexpr size_t kPairValues = kSigned<Isa> ? 0 : 64;
  template <class Isa>
  static constexpr int kFold = 1;

  template <class Isa, int T>
  static void sums(const uint8_t* w, const BlockQ8K* const (&x)[T], __m256i (&I)[T], __m256i (&M)[T]) {
    const __m256i table = iq4_table();
    for (int t = 0; t < T; ++t) I[t] = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
      const __m256i values = _mm256_shuffle_epi8(table, unpack_nibbles(w + 8 + 16 * ib));
      const __m256i magnitudes = _mm256_sign_epi8(values, values);
      const __m256i scale16 = _mm256_set1_epi16(static_cast<int16_t>(iq4xs_scale(w, ib)));
      for (int t = 0; t < T; ++t) {
        const __m256i xs = load256(x[t]->qs + 32 * ib);
        I[t] = Isa::dot_scaled(I[t], magnitudes, _mm256_sign_epi8(xs, values), scale16);
      }
    }
    for (int t = 0; t < T; ++t) M[t] = _mm256_setzero_si256();
  }
  template <class Isa>
  static void unpack(const uint8_t* w, uint8_t* codes, int32_t* scales, int32_t* coefs, float& d, float& neg_dmin) {
    const __m256i table = iq4_table(!kSigned<Isa>);
    for (int ib = 0; ib < 8; ++ib) {
      scales[ib] = iq4xs_scale(w, ib);
      store256(codes + 32 * ib, _mm256_shuffle_epi8(table, unpack_nibbles(w + 8 + 16 * ib)));
    }
    for (int k = 0; k < 4; ++k) coefs[k] = int16_pair(-128 * scales[2 * k], -128 * scales[2 * k + 1]);
    d = half_at(w);
    neg_dmin = 0;
  }
};

}  // namespace
}  // namespace infertune::x86
