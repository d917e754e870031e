#pragma once
// Row-times-activation dot products for every weight type on 256-bit x86 vectors, and the row loops that
// drive them. Included ONLY by an ISA translation unit (kernels/matmul/avx2/matmul_avx2.cpp,
// kernels/matmul/avx512/matmul_avx512vnni.cpp) after its `#pragma GCC target`, so every function here is
// compiled for that unit's ISA; the anonymous namespace gives each unit its own copies (no ODR clash between
// ISAs). The one ISA difference is the integer multiply-add, supplied by the unit as the `Isa` policy:
//   Isa::dot(acc, u, s)            acc + per-int32-lane sums of 4 products u8 * s8
//   Isa::dot_scaled(acc, u, s, k)  acc + per-int32-lane sums of 2 int16 pair sums u8 * s8, times int16 k
// Products u * s are pair-summed in int16 first (maddubs), so callers keep 2 * |u| * |s| < 2^15.
//
// Integer types: weight codes (unsigned where the format allows, else made unsigned with the sign trick
// |w| * sign(x, w)) times int8 activation codes, summed exactly in int32 per block, then scaled in float.
// Weights are read through byte pointers at fixed field offsets: rows need not be aligned.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/matmul/activation_quant.h"
#include "kernels/matmul/avx2/x86_float_kernels.h"
#include "kernels/matmul/avx2/x86_simd_helpers.h"
#include "kernels/matmul/matmul.h"
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/blocks_k.h"

namespace infertune::x86 {
namespace {

using kquant::BlockQ8K;

// ---- 32-value formats against ActBlockQ8 --------------------------------------------------------------
// Each returns sum over the nb blocks of one weight row (`w`, packed blocks) times one activation row.

// Per-block partial sums: a float vector (scaled integer dot) and a scalar (the offset term). Four of them
// run side by side so that consecutive blocks do not wait on one FMA latency chain.
struct BlockAcc {
  __m256 v;
  float offset;
};

// sum of step(acc, block pointer, activation block) over the row, 4 blocks in flight.
template <size_t kBytes, class Step>
inline BlockAcc sum_blocks(const uint8_t* w, const ActBlockQ8* x, size_t nb, Step step) {
  BlockAcc a[4] = {
      {_mm256_setzero_ps(), 0}, {_mm256_setzero_ps(), 0}, {_mm256_setzero_ps(), 0}, {_mm256_setzero_ps(), 0}};
  size_t b = 0;
  for (; b + 4 <= nb; b += 4) {
    for (int k = 0; k < 4; ++k) step(a[k], w + (b + k) * kBytes, x[b + k]);
  }
  for (; b < nb; ++b) step(a[0], w + b * kBytes, x[b]);
  return {_mm256_add_ps(_mm256_add_ps(a[0].v, a[1].v), _mm256_add_ps(a[2].v, a[3].v)),
          (a[0].offset + a[1].offset) + (a[2].offset + a[3].offset)};
}

// Q8_0 (34 bytes: f16 d, int8 qs[32]).
template <class Isa>
float dot_q8_0(const uint8_t* w, const ActBlockQ8* x, size_t nb) {
  const BlockAcc sum = sum_blocks<34>(w, x, nb, [](BlockAcc& a, const uint8_t* blk, const ActBlockQ8& xb) {
    const __m256i dot = dot_signed<Isa>(_mm256_setzero_si256(), load256(blk + 2), load256(xb.qs));
    a.v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(half_at(blk) * xb.d), a.v);
  });
  return hsum(sum.v);
}

// Q4_0 (18 bytes: f16 d, qs[16]): value (q - 8) * d; the -8 is applied through the activation sums.
template <class Isa>
float dot_q4_0(const uint8_t* w, const ActBlockQ8* x, size_t nb) {
  const BlockAcc sum = sum_blocks<18>(w, x, nb, [](BlockAcc& a, const uint8_t* blk, const ActBlockQ8& xb) {
    const float dw = half_at(blk);
    const __m256i dot = Isa::dot(_mm256_setzero_si256(), unpack_nibbles(blk + 2), load256(xb.qs));
    a.v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(dw * xb.d), a.v);
    a.offset += dw * xb.dsum;
  });
  return hsum(sum.v) - 8 * sum.offset;
}

// Q4_1 (20 bytes: f16 d, f16 m, qs[16]): value q * d + m.
template <class Isa>
float dot_q4_1(const uint8_t* w, const ActBlockQ8* x, size_t nb) {
  const BlockAcc sum = sum_blocks<20>(w, x, nb, [](BlockAcc& a, const uint8_t* blk, const ActBlockQ8& xb) {
    const __m256i dot = Isa::dot(_mm256_setzero_si256(), unpack_nibbles(blk + 4), load256(xb.qs));
    a.v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(half_at(blk) * xb.d), a.v);
    a.offset += half_at(blk + 2) * xb.dsum;
  });
  return hsum(sum.v) + sum.offset;
}

// The 5-bit codes of a Q5_0 / Q5_1 block: nibbles plus 16 where the qh bit is set.
inline __m256i q5_codes(const uint8_t* qh, const uint8_t* qs) {
  return _mm256_or_si256(unpack_nibbles(qs), _mm256_and_si256(bytes_from_bits(u32_at(qh)), _mm256_set1_epi8(0x10)));
}

// Q5_0 (22 bytes: f16 d, qh[4], qs[16]): value (q - 16) * d.
template <class Isa>
float dot_q5_0(const uint8_t* w, const ActBlockQ8* x, size_t nb) {
  const BlockAcc sum = sum_blocks<22>(w, x, nb, [](BlockAcc& a, const uint8_t* blk, const ActBlockQ8& xb) {
    const float dw = half_at(blk);
    const __m256i dot = Isa::dot(_mm256_setzero_si256(), q5_codes(blk + 2, blk + 6), load256(xb.qs));
    a.v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(dw * xb.d), a.v);
    a.offset += dw * xb.dsum;
  });
  return hsum(sum.v) - 16 * sum.offset;
}

// Q5_1 (24 bytes: f16 d, f16 m, qh[4], qs[16]): value q * d + m.
template <class Isa>
float dot_q5_1(const uint8_t* w, const ActBlockQ8* x, size_t nb) {
  const BlockAcc sum = sum_blocks<24>(w, x, nb, [](BlockAcc& a, const uint8_t* blk, const ActBlockQ8& xb) {
    const __m256i dot = Isa::dot(_mm256_setzero_si256(), q5_codes(blk + 4, blk + 8), load256(xb.qs));
    a.v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(half_at(blk) * xb.d), a.v);
    a.offset += half_at(blk + 2) * xb.dsum;
  });
  return hsum(sum.v) + sum.offset;
}

// The IQ4 codebook in both 128-bit lanes, for byte lookups by nibble.
inline __m256i iq4_table() { return _mm256_broadcastsi128_si256(load128(basic_quant::kIq4Values)); }

// IQ4_NL (18 bytes: f16 d, qs[16]): value d * kIq4Values[q].
template <class Isa>
float dot_iq4_nl(const uint8_t* w, const ActBlockQ8* x, size_t nb) {
  const __m256i table = iq4_table();
  const BlockAcc sum = sum_blocks<18>(w, x, nb, [table](BlockAcc& a, const uint8_t* blk, const ActBlockQ8& xb) {
    const __m256i values = _mm256_shuffle_epi8(table, unpack_nibbles(blk + 2));
    const __m256i dot = dot_signed<Isa>(_mm256_setzero_si256(), values, load256(xb.qs));
    a.v = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(half_at(blk) * xb.d), a.v);
  });
  return hsum(sum.v);
}

// ---- 256-value formats against BlockQ8K ---------------------------------------------------------------

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

// Q4_K (144 bytes: f16 d, f16 dmin, scales[12], qs[128]): value d * sc[j] * q - dmin * m[j] per 32-value
// sub-block j. The min term is dmin * sum_j m[j] * (sum of sub-block j's activation codes) = the q8_K
// group sums, two per sub-block.
template <class Isa>
float dot_q4_K(const uint8_t* w, const BlockQ8K* x, size_t nb) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps();
  __m256 acc_min = _mm256_setzero_ps();  // dmin terms, a separate dependency chain
  for (size_t b = 0; b < nb; ++b, w += 144) {
    uint8_t sc[8], mn[8];
    unpack_scales_mins(w + 4, sc, mn);
    const __m256i scales16 =
        _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc))));
    const __m128i mins8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(mn));
    const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mins8, mins8));  // m0 m0 m1 m1 ...
    const __m256i min_dot = _mm256_madd_epi16(load256(x[b].bsums), mins16);
    const uint8_t* qs = w + 16;
    const int8_t* xq = x[b].qs;
    __m256i isum = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i q = load256(qs + 32 * c);
      isum = Isa::dot_scaled(isum, _mm256_and_si256(q, low4), load256(xq + 64 * c),
                             _mm256_shuffle_epi8(scales16, word_pick(2 * c)));
      isum = Isa::dot_scaled(isum, _mm256_and_si256(_mm256_srli_epi16(q, 4), low4), load256(xq + 64 * c + 32),
                             _mm256_shuffle_epi8(scales16, word_pick(2 * c + 1)));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(half_at(w) * x[b].d), _mm256_cvtepi32_ps(isum), acc);
    acc_min = _mm256_fmadd_ps(_mm256_set1_ps(half_at(w + 2) * x[b].d), _mm256_cvtepi32_ps(min_dot), acc_min);
  }
  return hsum(acc) - hsum(acc_min);
}

// Q5_K (176 bytes: f16 d, f16 dmin, scales[12], qh[32], qs[128]): Q4_K with a fifth bit: bit 2c of qh[l]
// for value 64c + l, bit 2c + 1 for value 64c + 32 + l.
template <class Isa>
float dot_q5_K(const uint8_t* w, const BlockQ8K* x, size_t nb) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i one = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps();
  __m256 acc_min = _mm256_setzero_ps();  // dmin terms, a separate dependency chain
  for (size_t b = 0; b < nb; ++b, w += 176) {
    uint8_t sc[8], mn[8];
    unpack_scales_mins(w + 4, sc, mn);
    const __m256i scales16 =
        _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc))));
    const __m128i mins8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(mn));
    const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mins8, mins8));
    const __m256i min_dot = _mm256_madd_epi16(load256(x[b].bsums), mins16);
    __m256i high = load256(w + 16);  // shifted right by 2 per chunk
    const uint8_t* qs = w + 48;
    const int8_t* xq = x[b].qs;
    __m256i isum = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i q = load256(qs + 32 * c);
      const __m256i lo_bit = _mm256_slli_epi16(_mm256_and_si256(high, one), 4);
      const __m256i hi_bit = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 1), one), 4);
      high = _mm256_srli_epi16(high, 2);
      const __m256i lo = _mm256_or_si256(_mm256_and_si256(q, low4), lo_bit);
      const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), hi_bit);
      isum = Isa::dot_scaled(isum, lo, load256(xq + 64 * c), _mm256_shuffle_epi8(scales16, word_pick(2 * c)));
      isum = Isa::dot_scaled(isum, hi, load256(xq + 64 * c + 32), _mm256_shuffle_epi8(scales16, word_pick(2 * c + 1)));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(half_at(w) * x[b].d), _mm256_cvtepi32_ps(isum), acc);
    acc_min = _mm256_fmadd_ps(_mm256_set1_ps(half_at(w + 2) * x[b].d), _mm256_cvtepi32_ps(min_dot), acc_min);
  }
  return hsum(acc) - hsum(acc_min);
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

// Q6_K (210 bytes: ql[128], qh[64], int8 scales[16], f16 d): value d * sc[j] * (q - 32) per 16-value
// sub-block j. Codes are used unsigned (0..63); the -32 comes off through the q8_K group sums.
template <class Isa>
float dot_q6_K(const uint8_t* w, const BlockQ8K* x, size_t nb) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps();
  for (size_t b = 0; b < nb; ++b, w += 210) {
    const __m256i scales16 = _mm256_cvtepi8_epi16(load128(w + 192));  // [16] sub-block scales
    const __m256i offset = _mm256_madd_epi16(load256(x[b].bsums), scales16);
    const int8_t* xq = x[b].qs;
    __m256i isum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i hs = half_scales(scales16, h);
      const __m256i ql0 = load256(w + 64 * h);
      const __m256i ql1 = load256(w + 64 * h + 32);
      const __m256i qh = load256(w + 128 + 32 * h);
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(ql0, low4),
                          _mm256_slli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(0x03)), 4)),
          _mm256_or_si256(_mm256_and_si256(ql1, low4),
                          _mm256_slli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(0x0C)), 2)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                          _mm256_and_si256(qh, _mm256_set1_epi8(0x30))),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                          _mm256_srli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(static_cast<char>(0xC0))), 2)),
      };
      for (int k = 0; k < 4; ++k) {
        isum = Isa::dot_scaled(isum, q[k], load256(xq + 128 * h + 32 * k), _mm256_shuffle_epi8(hs, pair_pick(k)));
      }
    }
    isum = _mm256_sub_epi32(isum, _mm256_slli_epi32(offset, 5));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(half_at(w + 208) * x[b].d), _mm256_cvtepi32_ps(isum), acc);
  }
  return hsum(acc);
}

// Q2_K (84 bytes: scales[16], qs[64], f16 d, f16 dmin): value d * (sc & 15) * q - dmin * (sc >> 4) per
// 16-value sub-block; code of value 128h + 32k + l is bits 2k, 2k+1 of qs[32h + l].
template <class Isa>
float dot_q2_K(const uint8_t* w, const BlockQ8K* x, size_t nb) {
  const __m256i low2 = _mm256_set1_epi8(3);
  const __m128i low4 = _mm_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps();
  for (size_t b = 0; b < nb; ++b, w += 84) {
    const __m128i packed = load128(w);
    const __m256i scales16 = _mm256_cvtepu8_epi16(_mm_and_si128(packed, low4));
    const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), low4));
    const __m256i min_dot = _mm256_madd_epi16(load256(x[b].bsums), mins16);
    const int8_t* xq = x[b].qs;
    __m256i isum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i hs = half_scales(scales16, h);
      const __m256i q = load256(w + 16 + 32 * h);
      for (int k = 0; k < 4; ++k) {
        const __m256i codes = _mm256_and_si256(_mm256_srli_epi16(q, 2 * k), low2);
        isum = Isa::dot_scaled(isum, codes, load256(xq + 128 * h + 32 * k), _mm256_shuffle_epi8(hs, pair_pick(k)));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(half_at(w + 80) * x[b].d), _mm256_cvtepi32_ps(isum), acc);
    acc = _mm256_fnmadd_ps(_mm256_set1_ps(half_at(w + 82) * x[b].d), _mm256_cvtepi32_ps(min_dot), acc);
  }
  return hsum(acc);
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

// Q3_K (110 bytes: hmask[32], qs[64], scales[12], f16 d): value d * sc * (q - 4) per 16-value sub-block,
// q = 2 low bits (as Q2_K) + 4 * (bit 4h + k of hmask[l]). Codes are used unsigned (0..7); the -4 comes
// off through the q8_K group sums.
template <class Isa>
float dot_q3_K(const uint8_t* w, const BlockQ8K* x, size_t nb) {
  const __m256i low2 = _mm256_set1_epi8(3);
  const __m256i one = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps();
  for (size_t b = 0; b < nb; ++b, w += 110) {
    const __m256i scales16 = q3_scales16(w + 96);
    const __m256i offset = _mm256_madd_epi16(load256(x[b].bsums), scales16);
    __m256i high = load256(w);  // shifted right by 1 per 32 values
    const int8_t* xq = x[b].qs;
    __m256i isum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i hs = half_scales(scales16, h);
      const __m256i q = load256(w + 32 + 32 * h);
      for (int k = 0; k < 4; ++k) {
        const __m256i hbit = _mm256_slli_epi16(_mm256_and_si256(high, one), 2);
        high = _mm256_srli_epi16(high, 1);
        const __m256i codes = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 2 * k), low2), hbit);
        isum = Isa::dot_scaled(isum, codes, load256(xq + 128 * h + 32 * k), _mm256_shuffle_epi8(hs, pair_pick(k)));
      }
    }
    isum = _mm256_sub_epi32(isum, _mm256_slli_epi32(offset, 2));
    acc = _mm256_fmadd_ps(_mm256_set1_ps(half_at(w + 108) * x[b].d), _mm256_cvtepi32_ps(isum), acc);
  }
  return hsum(acc);
}

// IQ4_XS (136 bytes: f16 d, u16 scales_h, scales_l[4], qs[128]): 8 sub-blocks of 32,
// value d * (ls - 32) * kIq4Values[q] with a 6-bit ls per sub-block.
template <class Isa>
float dot_iq4_xs(const uint8_t* w, const BlockQ8K* x, size_t nb) {
  const __m256i table = iq4_table();
  __m256 acc = _mm256_setzero_ps();
  for (size_t b = 0; b < nb; ++b, w += 136) {
    uint16_t scales_h;
    std::memcpy(&scales_h, w + 2, 2);
    const uint8_t* scales_l = w + 4;
    const int8_t* xq = x[b].qs;
    __m256i isum = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = ((scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4);
      const __m256i values = _mm256_shuffle_epi8(table, unpack_nibbles(w + 8 + 16 * ib));
      const __m256i xs = load256(xq + 32 * ib);
      isum = Isa::dot_scaled(isum, _mm256_sign_epi8(values, values), _mm256_sign_epi8(xs, values),
                             _mm256_set1_epi16(static_cast<int16_t>(ls - 32)));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(half_at(w) * x[b].d), _mm256_cvtepi32_ps(isum), acc);
  }
  return hsum(acc);
}

// ---- row loops ----------------------------------------------------------------------------------------
// Each thread owns rows [row_begin, row_end); activations are quantized once per call, and every weight
// row is dotted with all tokens while it is in cache.

template <float (*Dot)(const uint8_t*, const ActBlockQ8*, size_t)>
void matmul_q8_act(const MatmulProblem& p, size_t row_begin, size_t row_end) {
  if (row_begin >= row_end || p.n_tokens == 0) return;
  const ActBlockQ8* act = quantize_activation_rows_q8(p.x, p.n_tokens, p.n_cols);
  const size_t nb = p.n_cols / 32;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const uint8_t* w = weight_bytes(p);
  for (size_t r = row_begin; r < row_end; ++r) {
    for (size_t t = 0; t < p.n_tokens; ++t) p.y[t * p.n_rows + r] = Dot(w + r * row_bytes, act + t * nb, nb);
  }
}

template <float (*Dot)(const uint8_t*, const BlockQ8K*, size_t)>
void matmul_q8k_act(const MatmulProblem& p, size_t row_begin, size_t row_end) {
  if (row_begin >= row_end || p.n_tokens == 0) return;
  const BlockQ8K* act = quantize_activation_rows_q8k(p.x, p.n_tokens, p.n_cols);
  const size_t nb = p.n_cols / kquant::kSuperBlock;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const uint8_t* w = weight_bytes(p);
  for (size_t r = row_begin; r < row_end; ++r) {
    for (size_t t = 0; t < p.n_tokens; ++t) p.y[t * p.n_rows + r] = Dot(w + r * row_bytes, act + t * nb, nb);
  }
}

// Every kernel of this header for one Isa, as (type, function) pairs.
struct TypedKernel {
  GgmlType type;
  MatmulFn fn;
};

template <class Isa>
constexpr TypedKernel kIsaKernels[] = {
    {GgmlType::Q4_K, matmul_q8k_act<dot_q4_K<Isa>>},     {GgmlType::Q6_K, matmul_q8k_act<dot_q6_K<Isa>>},
    {GgmlType::Q8_0, matmul_q8_act<dot_q8_0<Isa>>},      {GgmlType::Q4_0, matmul_q8_act<dot_q4_0<Isa>>},
    {GgmlType::F16, matmul_float_act<dot_f16>},          {GgmlType::F32, matmul_float_act<dot_f32>},
    {GgmlType::BF16, matmul_float_act<dot_bf16>},        {GgmlType::Q5_K, matmul_q8k_act<dot_q5_K<Isa>>},
    {GgmlType::Q5_0, matmul_q8_act<dot_q5_0<Isa>>},      {GgmlType::Q4_1, matmul_q8_act<dot_q4_1<Isa>>},
    {GgmlType::Q5_1, matmul_q8_act<dot_q5_1<Isa>>},      {GgmlType::IQ4_NL, matmul_q8_act<dot_iq4_nl<Isa>>},
    {GgmlType::IQ4_XS, matmul_q8k_act<dot_iq4_xs<Isa>>}, {GgmlType::Q2_K, matmul_q8k_act<dot_q2_K<Isa>>},
    {GgmlType::Q3_K, matmul_q8k_act<dot_q3_K<Isa>>},
};

}  // namespace
}  // namespace infertune::x86
