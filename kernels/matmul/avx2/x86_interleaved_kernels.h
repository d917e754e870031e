#pragma once
// The matrix-vector kernels of Q4_K, Q4_0 and Q6_K weights in the interleaved layout
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
inline constexpr bool kInterleaves =
    std::is_same_v<F, Q4KFormat> || std::is_same_v<F, Q4_0Format> || std::is_same_v<F, Q6KFormat>;

// A shuffle mask that gives, in every 128-bit lane, 32-bit lane q the int16 pair (byte a + q, byte b + q): in the
// low byte of each int16 (zero-extended), or with `high` in its high byte (an arithmetic shift right by 8 then
// sign-extends it).
inline __m256i lane_byte_pairs(int a, int b, bool high = false) {
  alignas(32) int8_t m[32];
  for (int lane = 0; lane < 2; ++lane) {
    for (int q = 0; q < 4; ++q) {
      int8_t* p = m + 16 * lane + 4 * q;
      p[high ? 1 : 0] = static_cast<int8_t>(a + q);
      p[high ? 3 : 2] = static_cast<int8_t>(b + q);
      p[high ? 0 : 1] = -128;  // a set top bit: zero
      p[high ? 2 : 3] = -128;
    }
  }
  return load256(m);
}

// Shuffle masks that turn the decoded 6-bit scales / mins of an interleaved super-block (two vectors, sub-blocks
// 0-3 and 4-7; byte 4 (j % 4) + q of each 128-bit lane = sub-block j of row q or 4 + q) into int16 operands:
//   scale[j % 4]  (s_j of the lane's row) twice per 32-bit lane: the madd that scales sub-block j's pair sums
//   min[k]        (m_2k, m_2k+1) of the lane's row: the madd with the activation's sub-block sums
struct Q4KLaneMasks {
  __m256i scale[4], min[2];
  Q4KLaneMasks() {
    for (int j = 0; j < 4; ++j) scale[j] = lane_byte_pairs(4 * j, 4 * j);
    for (int k = 0; k < 2; ++k) min[k] = lane_byte_pairs(8 * k, 8 * k + 4);
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
inline void q4k_interleaved_sums(const uint8_t* gb, const BlockQ8K& x, const Q4KLaneMasks& masks, __m256i& I,
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
    __m256i pairs = _mm256_setzero_si256();
    for (int i = 0; i < 4; ++i) {
      const __m256i q = load256(codes + 128 * j + 32 * i);
      const int8_t* xq = x.qs + 32 * j + 8 * i;
      const __m256i x_lo = _mm256_set1_epi32(static_cast<int>(u32_at(reinterpret_cast<const uint8_t*>(xq))));
      const __m256i x_hi = _mm256_set1_epi32(static_cast<int>(u32_at(reinterpret_cast<const uint8_t*>(xq + 4))));
      pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(_mm256_and_si256(q, low4), x_lo));
      pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), x_hi));
    }
    I = _mm256_add_epi32(I, _mm256_madd_epi16(pairs, _mm256_shuffle_epi8(scales[j / 4], masks.scale[j % 4])));
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

// How far ahead the kernel fetches: the hardware prefetchers follow one contiguous stream, but start late at
// each new run of rows a thread is handed.
inline constexpr size_t kInterleavedPrefetchBytes = 16 * kQ4KInterleavedBlockBytes;

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

// The lines of `bytes` at `at` + kInterleavedPrefetchBytes into L1, when they are inside the weights.
inline void prefetch_ahead(const MatmulProblem& p, const uint8_t* at, size_t bytes) {
  const uint8_t* weights = weight_bytes(p);
  const size_t ahead = static_cast<size_t>(at - weights) + kInterleavedPrefetchBytes;
  if (ahead + bytes > p.weights.size()) return;
  for (size_t line = 0; line < bytes; line += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(weights + ahead + line), _MM_HINT_T0);
  }
}

// Q4_K: y[t][r] for rows [row_begin, row_end) and every token.
template <class Isa>
void matvec_q4k_interleaved(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  const size_t nsb = p.n_cols / kquant::kSuperBlock;
  const Q4KLaneMasks masks;
  for_row_groups(p, row_begin, row_end, nsb * kQ4KInterleavedBlockBytes, [&](const uint8_t* group, size_t t) {
    const BlockQ8K* x = a.q8k_row(t);
    __m256 acc = _mm256_setzero_ps();
    for (size_t sb = 0; sb < nsb; ++sb) {
      const uint8_t* gb = group + sb * kQ4KInterleavedBlockBytes;
      if (t == 0) prefetch_ahead(p, gb, kQ4KInterleavedBlockBytes);
      __m256i I, M;
      q4k_interleaved_sums(gb, x[sb], masks, I, M);
      const __m256 d = _mm256_cvtph_ps(load128(gb));
      const __m256 neg_dmin = _mm256_xor_ps(_mm256_cvtph_ps(load128(gb + 16)), _mm256_set1_ps(-0.0f));
      const __m256 dx = _mm256_set1_ps(x[sb].d);
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(I), _mm256_mul_ps(d, dx), acc);
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(M), _mm256_mul_ps(neg_dmin, dx), acc);
    }
    return acc;
  });
}

// ---- Q4_0 ----------------------------------------------------------------------------------------------

// One interleaved block `gb` of 8 rows against 32 activation codes, values 0-15 at `first`, 16-31 at `second`:
// lane r = sum q x of row r (codes 0-15).
inline __m256i q4_0_interleaved_dots(const uint8_t* gb, const int8_t* first, const int8_t* second) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256i pairs = _mm256_setzero_si256();
  for (int i = 0; i < 4; ++i) {
    const __m256i q = load256(gb + 16 + 32 * i);
    const auto* x = reinterpret_cast<const uint8_t*>((i < 2 ? first : second) + 8 * (i % 2));
    const __m256i x_lo = _mm256_set1_epi32(static_cast<int>(u32_at(x)));
    const __m256i x_hi = _mm256_set1_epi32(static_cast<int>(u32_at(x + 4)));
    pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(_mm256_and_si256(q, low4), x_lo));
    pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), x_hi));
  }
  return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

// As matvec_q4k_interleaved, for Q4_0: per block I = sum q x - 8 sum x, acc = fma(float(I), d dx, acc), as
// Q4_0Format's matrix-vector kernels (x86_q8_formats.h) compute it.
template <class Isa>
void matvec_q4_0_interleaved(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  const size_t nb = p.n_cols / 32;
  for_row_groups(p, row_begin, row_end, nb * kQ4_0InterleavedBlockBytes, [&](const uint8_t* group, size_t t) {
    const int8_t* xq = a.q8_codes(t);
    const float* dx = a.q8_scales(t);
    const int32_t* isums = a.q8_isums(t);
    __m256 acc = _mm256_setzero_ps();
    for (size_t b = 0; b < nb; ++b) {
      const uint8_t* gb = group + b * kQ4_0InterleavedBlockBytes;
      if (t == 0 && b % 4 == 0) prefetch_ahead(p, gb, 4 * kQ4_0InterleavedBlockBytes);
      // The codes are pair-interleaved (pair_interleave_q8): block 2p + k's halves at 64p + 16k and 64p + 32
      // + 16k; an odd last block in value order.
      const bool paired = b + 1 < nb || b % 2 == 1;
      const int8_t* first = paired ? xq + 64 * (b / 2) + 16 * (b % 2) : xq + 32 * b;
      const int8_t* second = paired ? first + 32 : first + 16;
      const __m256i dots = _mm256_add_epi32(q4_0_interleaved_dots(gb, first, second), _mm256_set1_epi32(-8 * isums[b]));
      const __m256 d = _mm256_cvtph_ps(load128(gb));
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dots), _mm256_mul_ps(d, _mm256_set1_ps(dx[b])), acc);
    }
    return acc;
  });
}

// ---- Q6_K ----------------------------------------------------------------------------------------------

// Shuffle masks for the int8 scales of an interleaved Q6_K super-block (four vectors, sub-blocks 4v..4v+3; byte
// 4 (j % 4) + q of each 128-bit lane = sub-block j of row q or 4 + q), as sign-extended int16 operands:
//   scale[j % 4]  (s_j, s_j) of the lane's row: the madd that scales sub-block j's pair sums
//   pair[k]       (s_4v+2k, s_4v+2k+1) of the lane's row: the madd with the activation's 16-value sums
struct Q6KLaneMasks {
  __m256i scale[4], pair[2];
  Q6KLaneMasks() {
    for (int m = 0; m < 4; ++m) scale[m] = lane_byte_pairs(4 * m, 4 * m, true);
    for (int k = 0; k < 2; ++k) pair[k] = lane_byte_pairs(8 * k, 8 * k + 4, true);
  }
  static __m256i pick(__m256i scales, __m256i mask) { return _mm256_srai_epi16(_mm256_shuffle_epi8(scales, mask), 8); }
};

// One interleaved super-block `gb` of 8 rows against one token's q8_K block x: lane r = the row's
// sum_j s_j (codes_j . x_j - 32 sum x_j), the I of Q6KFormat::sums. Codes are 0..63, so a maddubs pair is at most
// 2 x 63 x 128 = 16128 and two of them fit an int16: each 16-value sub-block is two int16 sums, widened by madd.
inline __m256i q6k_interleaved_sums(const uint8_t* gb, const BlockQ8K& x, const Q6KLaneMasks& masks) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), top2 = _mm256_set1_epi8(0x30);
  const uint8_t* codes = gb + 144;
  __m256i I = _mm256_setzero_si256(), offsets = _mm256_setzero_si256();
  for (int v = 0; v < 4; ++v) {
    const __m256i scales = load256(gb + 16 + 32 * v);
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      const int j = 4 * v + m;
      const uint8_t* c = codes + 96 * j;
      const __m256i n01 = load256(c), n23 = load256(c + 32), high = load256(c + 64);
      const auto* xq = reinterpret_cast<const uint8_t*>(x.qs + 16 * j);
      // Values 16j + 4i + b for i = 0-3: low bits from nibble i % 2 of n01 / n23, top bits from bits 2i of high.
      const __m256i c0 =
          _mm256_or_si256(_mm256_and_si256(n01, low4), _mm256_and_si256(_mm256_slli_epi16(high, 4), top2));
      const __m256i c1 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(n01, 4), low4),
                                         _mm256_and_si256(_mm256_slli_epi16(high, 2), top2));
      const __m256i c2 = _mm256_or_si256(_mm256_and_si256(n23, low4), _mm256_and_si256(high, top2));
      const __m256i c3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(n23, 4), low4),
                                         _mm256_and_si256(_mm256_srli_epi16(high, 2), top2));
      const __m256i p01 =
          _mm256_add_epi16(_mm256_maddubs_epi16(c0, _mm256_set1_epi32(static_cast<int>(u32_at(xq)))),
                           _mm256_maddubs_epi16(c1, _mm256_set1_epi32(static_cast<int>(u32_at(xq + 4)))));
      const __m256i p23 =
          _mm256_add_epi16(_mm256_maddubs_epi16(c2, _mm256_set1_epi32(static_cast<int>(u32_at(xq + 8)))),
                           _mm256_maddubs_epi16(c3, _mm256_set1_epi32(static_cast<int>(u32_at(xq + 12)))));
      const __m256i s = Q6KLaneMasks::pick(scales, masks.scale[m]);
      I = _mm256_add_epi32(I, _mm256_add_epi32(_mm256_madd_epi16(p01, s), _mm256_madd_epi16(p23, s)));
    }
    for (int k = 0; k < 2; ++k) {
      const __m256i x_pair =
          _mm256_set1_epi32(static_cast<int>(u32_at(reinterpret_cast<const uint8_t*>(x.bsums + 4 * v + 2 * k))));
      offsets = _mm256_add_epi32(offsets, _mm256_madd_epi16(Q6KLaneMasks::pick(scales, masks.pair[k]), x_pair));
    }
  }
  return _mm256_sub_epi32(I, _mm256_slli_epi32(offsets, 5));
}

// Q6_K: y[t][r] for rows [row_begin, row_end) and every token; acc = fma(float(I), d dx, acc) per super-block, as
// the file layout's kernels compute it.
template <class Isa>
void matvec_q6k_interleaved(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  const size_t nsb = p.n_cols / kquant::kSuperBlock;
  const Q6KLaneMasks masks;
  for_row_groups(p, row_begin, row_end, nsb * kQ6KInterleavedBlockBytes, [&](const uint8_t* group, size_t t) {
    const BlockQ8K* x = a.q8k_row(t);
    __m256 acc = _mm256_setzero_ps();
    for (size_t sb = 0; sb < nsb; ++sb) {
      const uint8_t* gb = group + sb * kQ6KInterleavedBlockBytes;
      if (t == 0) prefetch_ahead(p, gb, kQ6KInterleavedBlockBytes);
      const __m256i I = q6k_interleaved_sums(gb, x[sb], masks);
      const __m256 d = _mm256_cvtph_ps(load128(gb));
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(I), _mm256_mul_ps(d, _mm256_set1_ps(x[sb].d)), acc);
    }
    return acc;
  });
}

// ---- decoding one row for the tiled kernels -----------------------------------------------------------

// The 4-byte code words of one row at `offsets` (a word per 32-bit lane: value 8i..8i+3 in the low nibbles,
// 8i+4..8i+7 in the high ones) as 64 codes in value order, two vectors.
inline void lane_words_to_codes(__m256i words, uint8_t* codes) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i lo = _mm256_and_si256(words, low4);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(words, 4), low4);
  const __m256i a = _mm256_unpacklo_epi32(lo, hi);  // words 0, 1 | 4, 5
  const __m256i b = _mm256_unpackhi_epi32(lo, hi);  // words 2, 3 | 6, 7
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes), _mm256_permute2x128_si256(a, b, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + 32), _mm256_permute2x128_si256(a, b, 0x31));
}

// Row `lane` of an interleaved Q4_K super-block as Q4KFormat::unpack gives it from the file's block: codes
// [256] in value order, scales [8], min pairs [4], d, -dmin.
inline void q4k_unpack_interleaved(const uint8_t* gb, size_t lane, uint8_t* codes, int32_t* scales, int32_t* coefs,
                                   float& d, float& neg_dmin) {
  d = half_at(gb + 2 * lane);
  neg_dmin = -half_at(gb + 16 + 2 * lane);
  // Sub-block j's scale of this row is at byte 16 (lane / 4) + 4 (j % 4) + lane % 4 of the 32-byte arrays: the
  // low nibble for j < 4, the high one for j >= 4; its top bits at 2 (j / 4) (mins: 4 + 2 (j / 4)).
  uint8_t mins[8];
  for (int m = 0; m < 4; ++m) {
    const size_t at = 16 * (lane / 4) + 4 * m + lane % 4;
    const uint8_t ls = gb[32 + at], lm = gb[64 + at], h = gb[96 + at];
    scales[m] = (ls & 15) | (h & 3) << 4;
    scales[m + 4] = (ls >> 4) | ((h >> 2) & 3) << 4;
    mins[m] = static_cast<uint8_t>((lm & 15) | ((h >> 4) & 3) << 4);
    mins[m + 4] = static_cast<uint8_t>((lm >> 4) | ((h >> 6) & 3) << 4);
  }
  for (int k = 0; k < 4; ++k) coefs[k] = int16_pair(mins[2 * k], mins[2 * k + 1]);
  // The row's words of sub-blocks j, j + 1: quarters at 32 bytes apart, sub-blocks at 128.
  const __m256i offsets = _mm256_setr_epi32(0, 8, 16, 24, 32, 40, 48, 56);  // in 4-byte units
  const auto* base = reinterpret_cast<const int*>(gb + 128 + 4 * lane);
  for (int j = 0; j < 8; j += 2) {
    lane_words_to_codes(_mm256_i32gather_epi32(base + 32 * j, offsets, 4), codes + 32 * j);
  }
}

// Row `lane` of an interleaved Q4_0 block: its 32 codes in value order and d.
inline void q4_0_unpack_interleaved(const uint8_t* gb, size_t lane, uint8_t* codes, float& d) {
  d = half_at(gb + 2 * lane);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const auto* base = reinterpret_cast<const int*>(gb + 16 + 4 * lane);
  const __m128i words = _mm_i32gather_epi32(base, _mm_setr_epi32(0, 8, 16, 24), 4);
  const __m256i both = _mm256_castsi128_si256(words);
  const __m128i lo = _mm256_castsi256_si128(_mm256_and_si256(both, low4));
  const __m128i hi = _mm256_castsi256_si128(_mm256_and_si256(_mm256_srli_epi16(both, 4), low4));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(codes), _mm_unpacklo_epi32(lo, hi));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + 16), _mm_unpackhi_epi32(lo, hi));
}

// Row `lane` of an interleaved Q6_K super-block as Q6KFormat::unpack gives it from the file's block: codes [256]
// in value order (0..63), scales [16], scale pairs [8], d, -dmin (0: no min).
inline void q6k_unpack_interleaved(const uint8_t* gb, size_t lane, uint8_t* codes, int32_t* scales, int32_t* coefs,
                                   float& d, float& neg_dmin) {
  d = half_at(gb + 2 * lane);
  neg_dmin = 0;
  const auto* sc = reinterpret_cast<const int8_t*>(gb + 16);
  for (int j = 0; j < 16; ++j) scales[j] = sc[interleaved_scale_slot(j, static_cast<int>(lane))];
  for (int k = 0; k < 8; ++k) coefs[k] = int16_pair(scales[2 * k], scales[2 * k + 1]);
  const __m128i two = _mm_set1_epi8(3);
  // Four sub-blocks (64 values) at a time: the row's low-bit words (two per sub-block, 96 bytes apart per
  // sub-block) in value order, then the top bits of its four high words, transposed so that the bits of values
  // 16j + 4i..16j + 4i + 3 (at bit 2i of the word of sub-block j) land on their codes.
  const __m256i low_words = _mm256_setr_epi32(0, 8, 24, 32, 48, 56, 72, 80);  // in 4-byte units
  const __m128i high_words = _mm_setr_epi32(16, 40, 64, 88);
  const auto* base = reinterpret_cast<const int*>(gb + 144 + 4 * lane);
  for (int j = 0; j < 16; j += 4) {
    uint8_t* out = codes + 16 * j;
    lane_words_to_codes(_mm256_i32gather_epi32(base + 24 * j, low_words, 4), out);
    const __m128i high = _mm_i32gather_epi32(base + 24 * j, high_words, 4);
    __m128i t[4];
    for (int i = 0; i < 4; ++i) t[i] = _mm_and_si128(_mm_srli_epi16(high, 2 * i), two);
    const __m128i t01lo = _mm_unpacklo_epi32(t[0], t[1]), t23lo = _mm_unpacklo_epi32(t[2], t[3]);
    const __m128i t01hi = _mm_unpackhi_epi32(t[0], t[1]), t23hi = _mm_unpackhi_epi32(t[2], t[3]);
    const __m128i per_sub[4] = {_mm_unpacklo_epi64(t01lo, t23lo), _mm_unpackhi_epi64(t01lo, t23lo),
                                _mm_unpacklo_epi64(t01hi, t23hi), _mm_unpackhi_epi64(t01hi, t23hi)};
    for (int q = 0; q < 4; ++q) {
      auto* at = reinterpret_cast<__m128i*>(out + 16 * q);
      _mm_storeu_si128(at, _mm_or_si128(_mm_loadu_si128(at), _mm_slli_epi16(per_sub[q], 4)));
    }
  }
}

}  // namespace
}  // namespace infertune::x86
