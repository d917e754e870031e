#pragma once
// The matrix-vector kernels of Q4_K, Q6_K, Q4_0 and Q8_0 weights in the interleaved layout
// (kernels/matmul/interleaved_rows.h): each group of 8 rows is one contiguous run, its codes side by side in 32-bit
// lanes (lane r = row r), so a vector of 4 activation codes broadcast to every lane multiplies 8 rows at once and no
// row sums are reduced across lanes. The maddubs pair sums of a sub-block are added in int16 as far as they are exact
// (4-bit codes: 8 pairs of at most 2 x 15 x 128, 30720 < 2^15; Q6_K's 6-bit codes: 2 pairs of at most 2 x 63 x 128)
// and widened by a madd with the rows' sub-block scales. The integers I (and M) of each row and super-block are the
// ones the file layout's kernels compute (x86_k_formats.h, x86_q8_formats.h), and the FMAs per super-block are the
// same in the same order, so a row's result is the same bits in either layout. Only AVX2 instructions: every x86
// unit (avx2, avxvnni, avx512vnni) compiles the same code. Included ONLY by x86_dot_kernels.h, after an ISA unit's
// `#pragma GCC target`.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/matmul/avx2/x86_k_formats.h"
#include "kernels/matmul/avx2/x86_q8_formats.h"
#include "kernels/matmul/avx2/x86_simd_helpers.h"
#include "kernels/matmul/interleaved_rows.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/quantized_activations.h"
#include "kernels/quant/blocks_k.h"

namespace infertune::x86 {
namespace {

using kquant::BlockQ8K;

// The formats with an interleaved layout (kernels/matmul/interleaved_rows.h).
template <class F>
inline constexpr bool kInterleaves = std::is_same_v<F, Q4KFormat> || std::is_same_v<F, Q6KFormat> ||
                                     std::is_same_v<F, Q4_0Format> || std::is_same_v<F, Q8_0Format>;

// A shuffle mask that fills, in every 128-bit lane, byte k of 32-bit lane q with byte from[k] + q of the lane
// (zero where from[k] < 0): e.g. {a, -1, b, -1} makes the int16 pair (byte a + q, byte b + q) zero-extended,
// {-1, -1, -1, a} puts byte a + q at the top of the int32 (an arithmetic shift right by 24 sign-extends it).
inline __m256i lane_mask(const int (&from)[4]) {
  alignas(32) int8_t m[32];
  for (int lane = 0; lane < 2; ++lane) {
    for (int q = 0; q < 4; ++q) {
      for (int k = 0; k < 4; ++k) m[16 * lane + 4 * q + k] = static_cast<int8_t>(from[k] < 0 ? -128 : from[k] + q);
    }
  }
  return load256(m);
}

// The sub-block dot products of the matrix-vector kernels, per 32-bit lane. Without VNNI the maddubs pair sums
// are added in int16 and widened once, by the madd with the lane's scale (int16 pairs (s, s)); with VNNI each
// product is accumulated in int32 by VPDPBUSD and multiplied by the lane's int32 scale.
template <class Isa>
struct SubBlockDots {
  __m256i sum;
  SubBlockDots() { sum = _mm256_setzero_si256(); }
  void add(__m256i codes, __m256i x) {
    if constexpr (Isa::kWideUnsigned) {
      sum = Isa::dot(sum, codes, x);
    } else {
      sum = _mm256_add_epi16(sum, _mm256_maddubs_epi16(codes, x));
    }
  }
  // The lane's scale: an int16 pair (s, s) without VNNI, an int32 with it.
  __m256i scaled(__m256i scale) const {
    if constexpr (Isa::kWideUnsigned) return _mm256_mullo_epi32(sum, scale);
    return _mm256_madd_epi16(sum, scale);
  }
};

// Shuffle masks that turn the decoded 6-bit scales / mins of an interleaved super-block (two vectors, sub-blocks
// 0-3 and 4-7; byte 4 (j % 4) + q of each 128-bit lane = sub-block j of row q or 4 + q) into int16 operands:
//   scale[j % 4]  s_j of the lane's row, as SubBlockDots<Isa>::scaled takes it
//   min[k]        (m_2k, m_2k+1) of the lane's row: the madd with the activation's sub-block sums
template <class Isa>
struct Q4KLaneMasks {
  __m256i scale[4], min[2];
  Q4KLaneMasks() {
    for (int j = 0; j < 4; ++j) {
      scale[j] = Isa::kWideUnsigned ? lane_mask({4 * j, -1, -1, -1}) : lane_mask({4 * j, -1, 4 * j, -1});
    }
    for (int k = 0; k < 2; ++k) min[k] = lane_mask({8 * k, -1, 8 * k + 4, -1});
  }
};

// The 6-bit scales (or mins) of sub-blocks 0-3 (`first`) and 4-7 (`second`) of an interleaved super-block, from
// their low nibbles (32 bytes at `low`) and the top bits (32 bytes at `high`, at bit `shift` and `shift + 2`).
inline void q4k_six_bit_pair(const uint8_t* low, __m256i high, int shift, __m256i& first, __m256i& second) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), three = _mm256_set1_epi8(3);
  const __m256i l = load256(low);
  // Bytes shift right in 16-bit lanes: the bits from the neighbour byte are masked off.
  const __m256i top_first = _mm256_and_si256(_mm256_srli_epi16(high, shift), three);
  const __m256i top_second = _mm256_and_si256(_mm256_srli_epi16(high, shift + 2), three);
  first = _mm256_or_si256(_mm256_and_si256(l, low4), _mm256_slli_epi16(top_first, 4));
  second = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l, 4), low4), _mm256_slli_epi16(top_second, 4));
}

// One interleaved super-block `gb` of 8 rows against one token's q8_K block x: lane r of I = the row's
// sum_j s_j (codes_j . x_j), of M = sum_j m_j (sum of x_j), as Q4KFormat::sums makes them.
template <class Isa>
inline void q4k_interleaved_sums(const uint8_t* gb, const BlockQ8K& x, const Q4KLaneMasks<Isa>& masks, __m256i& I,
                                 __m256i& M) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i high = load256(gb + 96);
  __m256i scales[2], mins[2];
  q4k_six_bit_pair(gb + 32, high, 0, scales[0], scales[1]);
  q4k_six_bit_pair(gb + 64, high, 4, mins[0], mins[1]);
  const uint8_t* codes = gb + 128;
  I = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    SubBlockDots<Isa> dots;
    for (int i = 0; i < 4; ++i) {
      const __m256i q = load256(codes + 128 * j + 32 * i);
      const auto* xq = reinterpret_cast<const uint8_t*>(x.qs + 32 * j + 8 * i);
      dots.add(_mm256_and_si256(q, low4), _mm256_set1_epi32(static_cast<int>(u32_at(xq))));
      dots.add(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), _mm256_set1_epi32(static_cast<int>(u32_at(xq + 4))));
    }
    I = _mm256_add_epi32(I, dots.scaled(_mm256_shuffle_epi8(scales[j / 4], masks.scale[j % 4])));
  }
  // The activation's 32-value sums as int16 pairs (x_2k, x_2k+1): 32-bit element k of (0, 1 | 4, 5) after the
  // per-lane pack, broadcast to every lane.
  const __m256i sums32 = _mm256_madd_epi16(load256(x.bsums), _mm256_set1_epi16(1));
  const __m256i sums16 = _mm256_packs_epi32(sums32, sums32);
  const int element[4] = {0, 1, 4, 5};
  M = _mm256_setzero_si256();
  for (int k = 0; k < 4; ++k) {
    const __m256i x_pair = _mm256_permutevar8x32_epi32(sums16, _mm256_set1_epi32(element[k]));
    const __m256i m_pair = _mm256_shuffle_epi8(mins[k / 2], masks.min[k % 2]);
    M = _mm256_add_epi32(M, _mm256_madd_epi16(m_pair, x_pair));
  }
}

// No software prefetch: each group of 8 rows is one contiguous run, which the hardware prefetchers follow. On a
// Zen 4 host, prefetching 4-64 KiB ahead made one-thread generation 13-25% slower for Q4_K_M, Q4_0 and Q8_0 (and
// two threads no faster): the extra instructions and L1 fills cost more than they hid.

// y[t][r] for rows [row_begin, row_end) and every token, one group of 8 rows at a time: group_token(group, t)
// gives the group's 8 results for token t (a range that starts or ends inside a group computes the whole group
// and stores its part).
template <class GroupToken>
void for_row_groups(const MatmulProblem& p, size_t row_begin, size_t row_end, size_t group_bytes,
                    GroupToken group_token) {
  const uint8_t* weights = weight_bytes(p);
  for (size_t g = row_begin / kInterleavedRows; g * kInterleavedRows < row_end; ++g) {
    const size_t first = std::max(row_begin, g * kInterleavedRows);
    const size_t last = std::min(row_end, (g + 1) * kInterleavedRows);
    for (size_t t = 0; t < p.n_tokens; ++t) {
      alignas(32) float lanes[kInterleavedRows];
      _mm256_store_ps(lanes, group_token(weights + g * group_bytes, t));
      std::memcpy(p.y + t * p.n_rows + first, lanes + (first - g * kInterleavedRows), (last - first) * sizeof(float));
    }
  }
}

// ---- Q4_0 and Q8_0 ---------------------------------------------------------------------------------------

// One interleaved Q4_0 block `gb` of 8 rows against 32 activation codes, values 0-15 at `first`, 16-31 at
// `second`: lane r = sum q x of row r (codes 0-15).
template <class Isa>
inline __m256i q4_0_interleaved_dots(const uint8_t* gb, const int8_t* first, const int8_t* second) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  SubBlockDots<Isa> dots;
  for (int i = 0; i < 4; ++i) {
    const __m256i q = load256(gb + 16 + 32 * i);
    const auto* x = reinterpret_cast<const uint8_t*>((i < 2 ? first : second) + 8 * (i % 2));
    dots.add(_mm256_and_si256(q, low4), _mm256_set1_epi32(static_cast<int>(u32_at(x))));
    dots.add(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), _mm256_set1_epi32(static_cast<int>(u32_at(x + 4))));
  }
  return dots.scaled(Isa::kWideUnsigned ? _mm256_set1_epi32(1) : _mm256_set1_epi16(1));
}

// The same for Q8_0 (signed codes): with VNNI the codes + 128 as unsigned (the caller adds -128 sum x, Q8_0Format's
// kCodeOffset), without it the sign trick (dot_signed), as Q8_0Format's kernels take them.
template <class Isa>
inline __m256i q8_0_interleaved_dots(const uint8_t* gb, const int8_t* first, const int8_t* second) {
  __m256i dots = _mm256_setzero_si256();
  for (int i = 0; i < 8; ++i) {
    const __m256i q = load256(gb + 16 + 32 * i);
    const auto* x = reinterpret_cast<const uint8_t*>((i < 4 ? first : second) + 4 * (i % 4));
    const __m256i xb = _mm256_set1_epi32(static_cast<int>(u32_at(x)));
    dots = Isa::kWideUnsigned ? Isa::dot(dots, flip_sign_bits(q), xb) : dot_signed<Isa>(dots, q, xb);
  }
  return dots;
}

// As matvec_k_interleaved, for Q4_0 and Q8_0: per block I = sum q x + kCodeOffset sum x, acc = fma(float(I),
// d dx, acc), as their matrix-vector kernels in the file's layout (x86_q8_formats.h) compute it.
template <class Isa, class F>
void matvec_q8_interleaved(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  constexpr bool kQ8 = std::is_same_v<F, Q8_0Format>;
  constexpr size_t kBlockBytes = kQ8 ? kQ8_0InterleavedBlockBytes : kQ4_0InterleavedBlockBytes;
  constexpr int kOffset = F::template kCodeOffset<Isa>;
  const size_t nb = p.n_cols / 32;
  for_row_groups(p, row_begin, row_end, nb * kBlockBytes, [&](const uint8_t* group, size_t t) {
    const int8_t* xq = a.q8_codes(t);
    const float* dx = a.q8_scales(t);
    const int32_t* isums = a.q8_isums(t);
    __m256 acc = _mm256_setzero_ps();
    for (size_t b = 0; b < nb; ++b) {
      const uint8_t* gb = group + b * kBlockBytes;
      // The codes are pair-interleaved (pair_interleave_q8): block 2p + k's halves at 64p + 16k and 64p + 32
      // + 16k; an odd last block in value order.
      const bool paired = b + 1 < nb || b % 2 == 1;
      const int8_t* first = paired ? xq + 64 * (b / 2) + 16 * (b % 2) : xq + 32 * b;
      const int8_t* second = paired ? first + 32 : first + 16;
      __m256i dots =
          kQ8 ? q8_0_interleaved_dots<Isa>(gb, first, second) : q4_0_interleaved_dots<Isa>(gb, first, second);
      if constexpr (kOffset != 0) dots = _mm256_add_epi32(dots, _mm256_set1_epi32(kOffset * isums[b]));
      const __m256 d = _mm256_cvtph_ps(load128(gb));
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dots), _mm256_mul_ps(d, _mm256_set1_ps(dx[b])), acc);
    }
    return acc;
  });
}

// ---- Q6_K ----------------------------------------------------------------------------------------------

// Shuffle masks for the int8 scales of an interleaved Q6_K super-block (four vectors, sub-blocks 4v..4v+3; byte
// 4 (j % 4) + q of each 128-bit lane = sub-block j of row q or 4 + q), as sign-extended int16 operands:
//   scale[j % 4]  s_j of the lane's row, as SubBlockDots<Isa>::scaled takes it (pick_scale)
//   pair[k]       (s_4v+2k, s_4v+2k+1) of the lane's row: the madd with the activation's 16-value sums
template <class Isa>
struct Q6KLaneMasks {
  __m256i scale[4], pair[2];
  Q6KLaneMasks() {
    for (int m = 0; m < 4; ++m) {
      scale[m] = Isa::kWideUnsigned ? lane_mask({-1, -1, -1, 4 * m}) : lane_mask({-1, 4 * m, -1, 4 * m});
    }
    for (int k = 0; k < 2; ++k) pair[k] = lane_mask({-1, 8 * k, -1, 8 * k + 4});
  }
  // The signed scales a mask picked, sign-extended from the top byte of each int16 (or, for scale with VNNI, int32).
  static __m256i pick16(__m256i scales, __m256i mask) {
    return _mm256_srai_epi16(_mm256_shuffle_epi8(scales, mask), 8);
  }
  __m256i pick_scale(__m256i scales, int m) const {
    if constexpr (Isa::kWideUnsigned) return _mm256_srai_epi32(_mm256_shuffle_epi8(scales, scale[m]), 24);
    return pick16(scales, scale[m]);
  }
};

// The codes (0..63) of interleaved Q6_K sub-block j (its three vectors at `c`): word r of q[i] = row r's values
// 16j + 4i..16j + 4i + 3, low bits from nibble i % 2 of the first (i < 2) or second vector, top bits from bits 2i
// of the third.
inline void q6k_sub_block_codes(const uint8_t* c, __m256i (&q)[4]) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), top2 = _mm256_set1_epi8(0x30);
  const __m256i n01 = load256(c), n23 = load256(c + 32), high = load256(c + 64);
  q[0] = _mm256_or_si256(_mm256_and_si256(n01, low4), _mm256_and_si256(_mm256_slli_epi16(high, 4), top2));
  q[1] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(n01, 4), low4),
                         _mm256_and_si256(_mm256_slli_epi16(high, 2), top2));
  q[2] = _mm256_or_si256(_mm256_and_si256(n23, low4), _mm256_and_si256(high, top2));
  q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(n23, 4), low4),
                         _mm256_and_si256(_mm256_srli_epi16(high, 2), top2));
}

// One interleaved super-block `gb` of 8 rows against one token's q8_K block x: lane r = the row's
// sum_j s_j (codes_j . x_j - 32 sum x_j), the I of Q6KFormat::sums. Codes are 0..63, so a maddubs pair is at most
// 2 x 63 x 128 = 16128 and two of them fit an int16: each 16-value sub-block is two int16 sums, widened by madd.
template <class Isa>
inline __m256i q6k_interleaved_sums(const uint8_t* gb, const BlockQ8K& x, const Q6KLaneMasks<Isa>& masks) {
  const uint8_t* codes = gb + 144;
  __m256i I = _mm256_setzero_si256(), offsets = _mm256_setzero_si256();
  for (int v = 0; v < 4; ++v) {
    const __m256i scales = load256(gb + 16 + 32 * v);
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      const int j = 4 * v + m;
      const uint8_t* c = codes + 96 * j;
      __m256i q[4];
      q6k_sub_block_codes(c, q);
      const auto* xq = reinterpret_cast<const uint8_t*>(x.qs + 16 * j);
      // Two maddubs pairs fit an int16 (2 x 16128); four do not: two sums without VNNI.
      SubBlockDots<Isa> d01, d23;
      d01.add(q[0], _mm256_set1_epi32(static_cast<int>(u32_at(xq))));
      d01.add(q[1], _mm256_set1_epi32(static_cast<int>(u32_at(xq + 4))));
      SubBlockDots<Isa>& rest = Isa::kWideUnsigned ? d01 : d23;
      rest.add(q[2], _mm256_set1_epi32(static_cast<int>(u32_at(xq + 8))));
      rest.add(q[3], _mm256_set1_epi32(static_cast<int>(u32_at(xq + 12))));
      const __m256i s = masks.pick_scale(scales, m);
      I = _mm256_add_epi32(I, d01.scaled(s));
      if constexpr (!Isa::kWideUnsigned) I = _mm256_add_epi32(I, d23.scaled(s));
    }
    for (int k = 0; k < 2; ++k) {
      const auto* sums = reinterpret_cast<const uint8_t*>(x.bsums + 4 * v + 2 * k);
      const __m256i x_pair = _mm256_set1_epi32(static_cast<int>(u32_at(sums)));
      offsets = _mm256_add_epi32(offsets, _mm256_madd_epi16(Q6KLaneMasks<Isa>::pick16(scales, masks.pair[k]), x_pair));
    }
  }
  return _mm256_sub_epi32(I, _mm256_slli_epi32(offsets, 5));
}

// Q4_K and Q6_K: y[t][r] for rows [row_begin, row_end) and every token. Per super-block acc = fma(float(I), d dx,
// acc), then for Q4_K acc = fma(float(M), -dmin dx, acc), as the file layout's kernels compute it.
template <class Isa, class F>
void matvec_k_interleaved(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  constexpr bool kQ6K = std::is_same_v<F, Q6KFormat>;
  constexpr size_t kBlockBytes = kQ6K ? kQ6KInterleavedBlockBytes : kQ4KInterleavedBlockBytes;
  const std::conditional_t<kQ6K, Q6KLaneMasks<Isa>, Q4KLaneMasks<Isa>> masks;
  const size_t nsb = p.n_cols / kquant::kSuperBlock;
  for_row_groups(p, row_begin, row_end, nsb * kBlockBytes, [&](const uint8_t* group, size_t t) {
    const BlockQ8K* x = a.q8k_row(t);
    __m256 acc = _mm256_setzero_ps();
    for (size_t sb = 0; sb < nsb; ++sb) {
      const uint8_t* gb = group + sb * kBlockBytes;
      const __m256 d = _mm256_cvtph_ps(load128(gb));
      const __m256 dx = _mm256_set1_ps(x[sb].d);
      if constexpr (kQ6K) {
        const __m256i I = q6k_interleaved_sums<Isa>(gb, x[sb], masks);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(I), _mm256_mul_ps(d, dx), acc);
      } else {
        __m256i I, M;
        q4k_interleaved_sums<Isa>(gb, x[sb], masks, I, M);
        const __m256 neg_dmin = _mm256_xor_ps(_mm256_cvtph_ps(load128(gb + 16)), _mm256_set1_ps(-0.0f));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(I), _mm256_mul_ps(d, dx), acc);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(M), _mm256_mul_ps(neg_dmin, dx), acc);
      }
    }
    return acc;
  });
}

// ---- decoding rows for the tiled kernels ----------------------------------------------------------------
// The prompt kernels take 4 rows at a time; 4 rows of a group are one 128-bit half of every code vector
// (rows 4h..4h+3), so a tile's rows are decoded together: the 4 rows' 32-bit words of 4 vectors are transposed
// in registers (no gathers), then split into codes in value order.

// Where one decoded row goes: the row's codes, block scales and integer scales, from block (or super-block) 0.
struct DecodedRowOut {
  uint8_t* codes;
  float* d;
  float* off;
  int32_t* scales;
  int32_t* coefs;
};

// w[i] word q -> w[q] word i (a 4 x 4 transpose of 32-bit words).
inline void transpose_words(__m128i (&w)[4]) {
  const __m128i t0 = _mm_unpacklo_epi32(w[0], w[1]), t1 = _mm_unpacklo_epi32(w[2], w[3]);
  const __m128i t2 = _mm_unpackhi_epi32(w[0], w[1]), t3 = _mm_unpackhi_epi32(w[2], w[3]);
  w[0] = _mm_unpacklo_epi64(t0, t1);
  w[1] = _mm_unpackhi_epi64(t0, t1);
  w[2] = _mm_unpacklo_epi64(t2, t3);
  w[3] = _mm_unpackhi_epi64(t2, t3);
}

// 4 code words of one row (word i: values 8i..8i+3 in the low nibbles, 8i+4..8i+7 in the high ones) as 32 codes
// in value order.
inline void nibble_words_to_codes(__m128i words, uint8_t* codes) {
  const __m128i low4 = _mm_set1_epi8(0x0F);
  const __m128i lo = _mm_and_si128(words, low4), hi = _mm_and_si128(_mm_srli_epi16(words, 4), low4);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(codes), _mm_unpacklo_epi32(lo, hi));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + 16), _mm_unpackhi_epi32(lo, hi));
}

// Half h (rows 4h..4h+3) of the 4 code vectors at `at`, 32 bytes apart, transposed: word i of row q in w[q].
inline void quad_words(const uint8_t* at, int h, __m128i (&w)[4]) {
  for (int i = 0; i < 4; ++i) w[i] = load128(at + 32 * i + 16 * h);
  transpose_words(w);
}

// Q4_K: rows 4h..4h+3 of interleaved super-block sb (at gb) as Q4KFormat::unpack gives them from the file's blocks.
inline void q4k_unpack_interleaved_quad(const uint8_t* gb, int h, size_t sb, const DecodedRowOut (&out)[4]) {
  for (int q = 0; q < 4; ++q) {
    const size_t lane = 4 * static_cast<size_t>(h) + static_cast<size_t>(q);
    int32_t* scales = out[q].scales + 8 * sb;
    out[q].d[sb] = half_at(gb + 2 * lane);
    out[q].off[sb] = -half_at(gb + 16 + 2 * lane);
    // Sub-block j's scale of this row is at byte 16 h + 4 (j % 4) + q of the 32-byte arrays: the low nibble
    // for j < 4, the high one for j >= 4; its top bits at 2 (j / 4) (mins: 4 + 2 (j / 4)).
    uint8_t mins[8];
    for (int m = 0; m < 4; ++m) {
      const size_t at = 16 * static_cast<size_t>(h) + 4 * static_cast<size_t>(m) + static_cast<size_t>(q);
      const uint8_t ls = gb[32 + at], lm = gb[64 + at], top = gb[96 + at];
      scales[m] = (ls & 15) | (top & 3) << 4;
      scales[m + 4] = (ls >> 4) | ((top >> 2) & 3) << 4;
      mins[m] = static_cast<uint8_t>((lm & 15) | ((top >> 4) & 3) << 4);
      mins[m + 4] = static_cast<uint8_t>((lm >> 4) | ((top >> 6) & 3) << 4);
    }
    for (int k = 0; k < 4; ++k) out[q].coefs[4 * sb + k] = int16_pair(mins[2 * k], mins[2 * k + 1]);
  }
  for (int j = 0; j < 8; ++j) {
    __m128i w[4];
    quad_words(gb + 128 + 128 * j, h, w);
    for (int q = 0; q < 4; ++q) nibble_words_to_codes(w[q], out[q].codes + 256 * sb + 32 * j);
  }
}

// Q4_0: rows 4h..4h+3 of interleaved block b (at gb): codes and d.
inline void q4_0_unpack_interleaved_quad(const uint8_t* gb, int h, size_t b, const DecodedRowOut (&out)[4]) {
  for (int q = 0; q < 4; ++q) out[q].d[b] = half_at(gb + 2 * (4 * h + q));
  __m128i w[4];
  quad_words(gb + 16, h, w);
  for (int q = 0; q < 4; ++q) nibble_words_to_codes(w[q], out[q].codes + 32 * b);
}

// Q8_0: rows 4h..4h+3 of interleaved block b (at gb): codes (signed, or + 128 as unsigned with kFlip, as
// Q8_0Format::codes gives them) and d.
template <bool kFlip>
inline void q8_0_unpack_interleaved_quad(const uint8_t* gb, int h, size_t b, const DecodedRowOut (&out)[4]) {
  for (int q = 0; q < 4; ++q) out[q].d[b] = half_at(gb + 2 * (4 * h + q));
  for (int half = 0; half < 2; ++half) {  // values 0-15, 16-31
    __m128i w[4];
    quad_words(gb + 16 + 128 * half, h, w);
    for (int q = 0; q < 4; ++q) {
      const __m128i codes = kFlip ? _mm_xor_si128(w[q], _mm_set1_epi8(static_cast<char>(0x80))) : w[q];
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out[q].codes + 32 * b + 16 * half), codes);
    }
  }
}

// Q6_K: rows 4h..4h+3 of interleaved super-block sb (at gb) as Q6KFormat::unpack gives them: codes 0..63,
// scales [16], scale pairs [8], d, and -dmin 0 (no min).
inline void q6k_unpack_interleaved_quad(const uint8_t* gb, int h, size_t sb, const DecodedRowOut (&out)[4]) {
  const auto* sc = reinterpret_cast<const int8_t*>(gb + 16);
  for (int q = 0; q < 4; ++q) {
    const int lane = 4 * h + q;
    int32_t* scales = out[q].scales + 16 * sb;
    out[q].d[sb] = half_at(gb + 2 * lane);
    out[q].off[sb] = 0;
    for (int j = 0; j < 16; ++j) scales[j] = sc[interleaved_scale_slot(j, lane)];
    for (int k = 0; k < 8; ++k) out[q].coefs[8 * sb + k] = int16_pair(scales[2 * k], scales[2 * k + 1]);
  }
  for (int j = 0; j < 16; ++j) {
    __m256i q8[4];
    q6k_sub_block_codes(gb + 144 + 96 * j, q8);
    // Half h of each: word q of w[i] = row 4h + q's values 16j + 4i..16j + 4i + 3.
    __m128i w[4];
    for (int i = 0; i < 4; ++i) w[i] = h == 0 ? _mm256_castsi256_si128(q8[i]) : _mm256_extracti128_si256(q8[i], 1);
    transpose_words(w);
    for (int q = 0; q < 4; ++q) _mm_storeu_si128(reinterpret_cast<__m128i*>(out[q].codes + 256 * sb + 16 * j), w[q]);
  }
}

}  // namespace
}  // namespace infertune::x86
