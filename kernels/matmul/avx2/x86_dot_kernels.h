#pragma once
// Row-times-activation dot products for every weight type on 256-bit x86 vectors (the matvec path), the
// K formats' decoders for the tiled path (x86_tile_kernels.h), and the row loops that choose between them.
// Included ONLY by an ISA translation unit (kernels/matmul/avx2/matmul_avx2.cpp,
// kernels/matmul/avx512/matmul_avx512vnni.cpp) after its `#pragma GCC target`, so every function here is
// compiled for that unit's ISA; the anonymous namespace gives each unit its own copies (no ODR clash between
// ISAs). The unit supplies the ISA differences as the `Isa` policy:
//   Isa::dot(acc, u, s)            acc + per-int32-lane sums of 4 products u8 * s8
//   Isa::dot_scaled(acc, u, s, k)  acc + per-int32-lane sums of 2 int16 pair sums u8 * s8, times int16 k
//   Isa::kWideUnsigned             dot does not saturate (VNNI): codes may use all 8 bits unsigned
//   Isa::bit_bytes(bits, v)        byte j = v[j] where bit j of bits is set, else 0
//   Isa::Tile                      the tiled kernels' vector policy (x86_tile_kernels.h)
// Without kWideUnsigned, products are pair-summed in int16 first (maddubs), so callers keep
// 2 * |u| * |s| < 2^15.
//
// Integer types: weight codes (unsigned where the format allows, else made unsigned with the sign trick
// |w| * sign(x, w)) times int8 activation codes, summed exactly in int32 per block, then scaled in float.
// Weights are read through byte pointers at fixed field offsets: rows need not be aligned.
#include <immintrin.h>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/matmul/activation_quant.h"
#include "kernels/matmul/avx2/x86_float_kernels.h"
#include "kernels/matmul/avx2/x86_q8_formats.h"
#include "kernels/matmul/avx2/x86_simd_helpers.h"
#include "kernels/matmul/avx2/x86_tile_kernels.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/quantized_activations.h"
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/blocks_k.h"

namespace infertune::x86 {
namespace {

using kquant::BlockQ8K;

// ---- 32-value formats against q8 activations (matvec) ------------------------------------------------
// One weight row (`w`, nb packed blocks of format F) times one token's q8 row: codes pair-interleaved
// (pair_interleave_q8), scales xd and sums xs [nb]. Two blocks per step: their low-half codes share one
// vector and their high halves another, so one int32 vector holds block 2p in lanes 0-3 and block 2p + 1 in
// lanes 4-7; it is converted once and scaled by [d0 dx0] x 4, [d1 dx1] x 4 in one FMA. Offsets (o times the
// activation block sum) are summed apart.

// Integer dot of 32 weight codes (signed or not, per F) with 32 activation codes, added to acc.
template <class Isa, class F>
inline __m256i block_dot(__m256i acc, __m256i w, __m256i x) {
  if constexpr (F::template kSigned<Isa>) {
    return dot_signed<Isa>(acc, w, x);
  } else {
    return Isa::dot(acc, w, x);
  }
}

// Two adjacent floats of p as [p0, p1, 0, 0].
inline __m128 load_float_pair(const float* p) {
  return _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// The int32 dot of blocks b0 and b0 + kBytes (lanes 0-3, 4-7) with 64 pair-interleaved activation codes.
template <class Isa, class F>
inline __m256i pair_dot(const uint8_t* b0, const int8_t* xq) {
  __m256i lo, hi;
  F::template pair_codes<Isa>(b0, b0 + F::kBytes, lo, hi);
  return block_dot<Isa, F>(block_dot<Isa, F>(_mm256_setzero_si256(), lo, load256(xq)), hi, load256(xq + 32));
}

template <class Isa, class F>
float dot_q8_row(const uint8_t* w, const int8_t* xq, const float* xd, const float* xs, size_t nb) {
  const __m256i spread = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
  __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  // Eight blocks per step: their scales (one f16 conversion for all) times the activation scales give
  // s[8]; pair p of the step takes [s[2p] x 4, s[2p + 1] x 4]. Offsets: o[8] . sums[8] per step, where o is
  // the stored min or d (times kOffsetFactor once at the end).
  __m256 offset8 = _mm256_setzero_ps();
  size_t b = 0;
  for (; b + 8 <= nb; b += 8) {
    const uint8_t* blk = w + b * F::kBytes;
    const __m256 d = halves8<F::kBytes>(blk);
    const __m256 s = _mm256_mul_ps(d, _mm256_loadu_ps(xd + b));
    const __m256 o = F::kHasMin ? halves8<F::kBytes>(blk + 2) : d;
    offset8 = _mm256_fmadd_ps(o, _mm256_loadu_ps(xs + b), offset8);
    for (int p = 0; p < 4; ++p) {
      const __m256i dot = pair_dot<Isa, F>(blk + 2 * p * F::kBytes, xq + 32 * (b + 2 * p));
      const __m256i pick = _mm256_add_epi32(spread, _mm256_set1_epi32(2 * p));
      acc[p % 2] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_permutevar8x32_ps(s, pick), acc[p % 2]);
    }
  }
  float sum = hsum(offset8) * (F::kHasMin ? 1.0f : F::template kOffsetFactor<Isa>);
  for (; b + 2 <= nb; b += 2) {  // pairs left
    const uint8_t* b0 = w + b * F::kBytes;
    const __m128 d_o = F::template scale_pair<Isa>(b0, b0 + F::kBytes);  // [d0, d1, o0, o1]
    const __m128 scales = _mm_mul_ps(d_o, load_float_pair(xd + b));
    const __m256 s = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(scales), spread);
    acc[0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(pair_dot<Isa, F>(b0, xq + 32 * b)), s, acc[0]);
    const __m128 off = _mm_mul_ps(_mm_movehl_ps(d_o, d_o), load_float_pair(xs + b));
    sum += _mm_cvtss_f32(_mm_add_ss(off, _mm_movehdup_ps(off)));
  }
  if (b < nb) {  // an odd last block, in value order
    const uint8_t* blk = w + b * F::kBytes;
    float d, o;
    F::template scale_one<Isa>(blk, d, o);
    const __m256i dot = block_dot<Isa, F>(_mm256_setzero_si256(), F::template codes<Isa>(blk), load256(xq + 32 * b));
    acc[0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(d * xd[b]), acc[0]);
    sum += o * xs[b];
  }
  return hsum(_mm256_add_ps(acc[0], acc[1])) + sum;
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

// ---- K formats decoded for the tiled kernels ----------------------------------------------------------
// unpack<Isa>(blk, codes, scales, d, off) writes one super-block as
//   codes [256]  unsigned, in value order
//   scales [256 / kSub]  integer sub-block scales, d the float super-block scale
//   off [256 / kOffGroup]  offset coefficients: each multiplies the activation sum of its group
// so that  value = d * scales[v / kSub] * codes[v]  plus the offsets.

inline void store256(uint8_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }

// Q4_K: value = d * sc[j] * q - dmin * m[j] per 32-value sub-block j.
struct Q4KFormat {
  static constexpr size_t kBytes = 144, kSub = 32, kOffGroup = 32;
  template <class Isa>
  static constexpr bool kSigned = false;
  template <class Isa>
  static void unpack(const uint8_t* w, uint8_t* codes, int32_t* scales, float& d, float* off) {
    uint8_t sc[8], mn[8];
    unpack_scales_mins(w + 4, sc, mn);
    d = half_at(w);
    const float dmin = half_at(w + 2);
    for (int j = 0; j < 8; ++j) {
      scales[j] = sc[j];
      off[j] = -dmin * mn[j];
    }
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    for (int c = 0; c < 4; ++c) {
      const __m256i q = load256(w + 16 + 32 * c);
      store256(codes + 64 * c, _mm256_and_si256(q, low4));
      store256(codes + 64 * c + 32, _mm256_and_si256(_mm256_srli_epi16(q, 4), low4));
    }
  }
};

// Q5_K: Q4_K with the fifth bit from qh (see dot_q5_K).
struct Q5KFormat {
  static constexpr size_t kBytes = 176, kSub = 32, kOffGroup = 32;
  template <class Isa>
  static constexpr bool kSigned = false;
  template <class Isa>
  static void unpack(const uint8_t* w, uint8_t* codes, int32_t* scales, float& d, float* off) {
    uint8_t sc[8], mn[8];
    unpack_scales_mins(w + 4, sc, mn);
    d = half_at(w);
    const float dmin = half_at(w + 2);
    for (int j = 0; j < 8; ++j) {
      scales[j] = sc[j];
      off[j] = -dmin * mn[j];
    }
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i one = _mm256_set1_epi8(1);
    __m256i high = load256(w + 16);
    for (int c = 0; c < 4; ++c) {
      const __m256i q = load256(w + 48 + 32 * c);
      const __m256i lo_bit = _mm256_slli_epi16(_mm256_and_si256(high, one), 4);
      const __m256i hi_bit = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 1), one), 4);
      high = _mm256_srli_epi16(high, 2);
      store256(codes + 64 * c, _mm256_or_si256(_mm256_and_si256(q, low4), lo_bit));
      store256(codes + 64 * c + 32, _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), hi_bit));
    }
  }
};

// Q6_K: value = d * sc[g] * (q - 32) per 16-value group g; the -32 becomes the offset -32 d sc[g].
struct Q6KFormat {
  static constexpr size_t kBytes = 210, kSub = 16, kOffGroup = 16;
  template <class Isa>
  static constexpr bool kSigned = false;
  template <class Isa>
  static void unpack(const uint8_t* w, uint8_t* codes, int32_t* scales, float& d, float* off) {
    d = half_at(w + 208);
    for (int g = 0; g < 16; ++g) {
      scales[g] = static_cast<int8_t>(w[192 + g]);
      off[g] = -32.0f * d * static_cast<float>(scales[g]);
    }
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    for (int h = 0; h < 2; ++h) {
      const __m256i ql0 = load256(w + 64 * h);
      const __m256i ql1 = load256(w + 64 * h + 32);
      const __m256i qh = load256(w + 128 + 32 * h);
      uint8_t* out = codes + 128 * h;
      store256(out, _mm256_or_si256(_mm256_and_si256(ql0, low4),
                                    _mm256_slli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(0x03)), 4)));
      store256(out + 32, _mm256_or_si256(_mm256_and_si256(ql1, low4),
                                         _mm256_slli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(0x0C)), 2)));
      store256(out + 64, _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                                         _mm256_and_si256(qh, _mm256_set1_epi8(0x30))));
      store256(out + 96,
               _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                               _mm256_srli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(static_cast<char>(0xC0))), 2)));
    }
  }
};

// Q3_K: value = d * sc[g] * (q - 4) per 16-value group; the -4 becomes the offset -4 d sc[g].
struct Q3KFormat {
  static constexpr size_t kBytes = 110, kSub = 16, kOffGroup = 16;
  template <class Isa>
  static constexpr bool kSigned = false;
  template <class Isa>
  static void unpack(const uint8_t* w, uint8_t* codes, int32_t* scales, float& d, float* off) {
    d = half_at(w + 108);
    int16_t sc[16];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sc), q3_scales16(w + 96));
    for (int g = 0; g < 16; ++g) {
      scales[g] = sc[g];
      off[g] = -4.0f * d * static_cast<float>(sc[g]);
    }
    const __m256i low2 = _mm256_set1_epi8(3);
    const __m256i one = _mm256_set1_epi8(1);
    __m256i high = load256(w);  // shifted right by 1 per 32 values
    for (int h = 0; h < 2; ++h) {
      const __m256i q = load256(w + 32 + 32 * h);
      for (int k = 0; k < 4; ++k) {
        const __m256i hbit = _mm256_slli_epi16(_mm256_and_si256(high, one), 2);
        high = _mm256_srli_epi16(high, 1);
        store256(codes + 128 * h + 32 * k, _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 2 * k), low2), hbit));
      }
    }
  }
};

// Q2_K: value = d * (sc & 15) * q - dmin * (sc >> 4) per 16-value group.
struct Q2KFormat {
  static constexpr size_t kBytes = 84, kSub = 16, kOffGroup = 16;
  template <class Isa>
  static constexpr bool kSigned = false;
  template <class Isa>
  static void unpack(const uint8_t* w, uint8_t* codes, int32_t* scales, float& d, float* off) {
    d = half_at(w + 80);
    const float dmin = half_at(w + 82);
    for (int g = 0; g < 16; ++g) {
      scales[g] = w[g] & 15;
      off[g] = -dmin * static_cast<float>(w[g] >> 4);
    }
    const __m256i low2 = _mm256_set1_epi8(3);
    for (int h = 0; h < 2; ++h) {
      const __m256i q = load256(w + 16 + 32 * h);
      for (int k = 0; k < 4; ++k) {
        store256(codes + 128 * h + 32 * k, _mm256_and_si256(_mm256_srli_epi16(q, 2 * k), low2));
      }
    }
  }
};

// IQ4_XS: value = d * (ls - 32) * kIq4Values[q] per 32-value sub-block. With a non-saturating byte dot
// (Isa::kWideUnsigned) codes are kIq4Values + 128 with offset -128 d (ls - 32); else signed, no offset.
struct Iq4XsFormat {
  static constexpr size_t kBytes = 136, kSub = 32, kOffGroup = 32;
  template <class Isa>
  static constexpr bool kSigned = !Isa::kWideUnsigned;
  template <class Isa>
  static void unpack(const uint8_t* w, uint8_t* codes, int32_t* scales, float& d, float* off) {
    d = half_at(w);
    const unsigned scales_h = u16_at(w + 2);
    const __m256i table = iq4_table(!kSigned<Isa>);
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = ((w[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4);
      scales[ib] = ls - 32;
      off[ib] = kSigned<Isa> ? 0.0f : -128.0f * d * static_cast<float>(ls - 32);
      store256(codes + 32 * ib, _mm256_shuffle_epi8(table, unpack_nibbles(w + 8 + 16 * ib)));
    }
  }
};

// ---- row loops ----------------------------------------------------------------------------------------
// Each thread owns rows [row_begin, row_end). A single token (or a few) takes the matvec path: each weight
// row dotted with every token while it is in cache. From kMinPanelTokens tokens on, they run tiled
// (x86_tile_kernels.h).

// The activations in the format the problem's weight type reads: p.xq when it has them, else quantized
// here into a per-thread buffer (then every thread of a split problem quantizes all of x).
inline const QuantizedActivations& problem_activations(const MatmulProblem& p) {
  if (p.xq && p.xq->has(activation_format(p.type))) return *p.xq;
  thread_local QuantizedActivations local;
  const GgmlType types[] = {p.type};
  [[maybe_unused]] const Status quantized = local.quantize_all(p.x, p.n_tokens, p.n_cols, types);
  assert(quantized.ok());  // check_matmul_problem has validated the shape
  return local;
}

template <class Isa, class F>
void matmul_q8_act(const MatmulProblem& p, size_t row_begin, size_t row_end) {
  if (row_begin >= row_end || p.n_tokens == 0) return;
  const QuantizedActivations& a = problem_activations(p);
  if (a.has_panels()) return matmul_tiled_q8<Isa, F>(p, a, row_begin, row_end);
  const size_t nb = p.n_cols / 32;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const uint8_t* w = weight_bytes(p);
  for (size_t r = row_begin; r < row_end; ++r) {
    for (size_t t = 0; t < p.n_tokens; ++t) {
      p.y[t * p.n_rows + r] = dot_q8_row<Isa, F>(w + r * row_bytes, a.q8_codes(t), a.q8_scales(t), a.q8_sums(t), nb);
    }
  }
}

template <class Isa, class F, float (*Dot)(const uint8_t*, const BlockQ8K*, size_t)>
void matmul_q8k_act(const MatmulProblem& p, size_t row_begin, size_t row_end) {
  if (row_begin >= row_end || p.n_tokens == 0) return;
  const QuantizedActivations& a = problem_activations(p);
  if (a.has_panels()) return matmul_tiled_q8k<Isa, F>(p, a, row_begin, row_end);
  const size_t nb = p.n_cols / kquant::kSuperBlock;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const uint8_t* w = weight_bytes(p);
  for (size_t r = row_begin; r < row_end; ++r) {
    for (size_t t = 0; t < p.n_tokens; ++t) p.y[t * p.n_rows + r] = Dot(w + r * row_bytes, a.q8k_row(t), nb);
  }
}

// Every kernel of this header for one Isa, as (type, function) pairs.
struct TypedKernel {
  GgmlType type;
  MatmulFn fn;
};

template <class Isa>
constexpr TypedKernel kIsaKernels[] = {
    {GgmlType::Q4_K, matmul_q8k_act<Isa, Q4KFormat, dot_q4_K<Isa>>},
    {GgmlType::Q6_K, matmul_q8k_act<Isa, Q6KFormat, dot_q6_K<Isa>>},
    {GgmlType::Q8_0, matmul_q8_act<Isa, Q8_0Format>},
    {GgmlType::Q4_0, matmul_q8_act<Isa, Q4_0Format>},
    {GgmlType::F16, matmul_float_act<dot_f16>},
    {GgmlType::F32, matmul_float_act<dot_f32>},
    {GgmlType::BF16, matmul_float_act<dot_bf16>},
    {GgmlType::Q5_K, matmul_q8k_act<Isa, Q5KFormat, dot_q5_K<Isa>>},
    {GgmlType::Q5_0, matmul_q8_act<Isa, Q5_0Format>},
    {GgmlType::Q4_1, matmul_q8_act<Isa, Q4_1Format>},
    {GgmlType::Q5_1, matmul_q8_act<Isa, Q5_1Format>},
    {GgmlType::IQ4_NL, matmul_q8_act<Isa, Iq4NlFormat>},
    {GgmlType::IQ4_XS, matmul_q8k_act<Isa, Iq4XsFormat, dot_iq4_xs<Isa>>},
    {GgmlType::Q2_K, matmul_q8k_act<Isa, Q2KFormat, dot_q2_K<Isa>>},
    {GgmlType::Q3_K, matmul_q8k_act<Isa, Q3KFormat, dot_q3_K<Isa>>},
};

}  // namespace
}  // namespace infertune::x86
