#pragma once
// The matrix-vector kernel of Q4_K weights in the interleaved layout (kernels/matmul/interleaved_rows.h): each
// group of 8 rows is one contiguous run, its codes side by side in 32-bit lanes (lane r = row r), so a vector
// of 4 activation codes broadcast to every lane multiplies 8 rows at once and no row sums are reduced across
// lanes. Per sub-block of 32 values the 8 products of a lane are summed in int16 (each maddubs pair is at most
// 2 x 15 x 128 = 3840 in size, 8 of them 30720 < 2^15: exact) and widened once by a madd with the rows'
// sub-block scales. The integers I and M of each row and super-block are the ones the file layout's kernels
// compute (x86_k_formats.h), and the two FMAs per super-block are the same in the same order, so a row's result
// is the same bits in either layout.
// Only AVX2 instructions: every x86 unit (avx2, avxvnni, avx512vnni) compiles the same code.
// Included ONLY by x86_dot_kernels.h, after an ISA unit's `#pragma GCC target`.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/matmul/avx2/x86_simd_helpers.h"
#include "kernels/matmul/interleaved_rows.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/quantized_activations.h"
#include "kernels/quant/blocks_k.h"

namespace infertune::x86 {
namespace {

using kquant::BlockQ8K;

// Shuffle masks that turn the decoded 6-bit scales / mins of an interleaved super-block (two vectors, sub-blocks
// 0-3 and 4-7; byte 4 (j % 4) + q of each 128-bit lane = sub-block j of row q or 4 + q) into int16 operands:
//   scale[j % 4]  (s_j of the lane's row) twice per 32-bit lane: the madd that scales sub-block j's pair sums
//   min[k]        (m_2k, m_2k+1) of the lane's row: the madd with the activation's sub-block sums
struct Q4KLaneMasks {
  __m256i scale[4], min[2];
  Q4KLaneMasks() {
    for (int j = 0; j < 4; ++j) scale[j] = pairs_of_bytes(4 * j, 4 * j);
    for (int k = 0; k < 2; ++k) min[k] = pairs_of_bytes(8 * k, 8 * k + 4);
  }
  // In every 128-bit lane, 32-bit lane q = int16 (byte a + q, byte b + q), zero-extended.
  static __m256i pairs_of_bytes(int a, int b) {
    alignas(32) int8_t m[32];
    for (int lane = 0; lane < 2; ++lane) {
      for (int q = 0; q < 4; ++q) {
        int8_t* p = m + 16 * lane + 4 * q;
        p[0] = static_cast<int8_t>(a + q);
        p[1] = -128;  // a set top bit: zero
        p[2] = static_cast<int8_t>(b + q);
        p[3] = -128;
      }
    }
    return load256(m);
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

// y[t][r] for rows [row_begin, row_end) and every token, one group of 8 rows at a time (a range that starts or
// ends inside a group computes the whole group and stores its part).
template <class Isa>
void matvec_q4k_interleaved(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  const size_t nsb = p.n_cols / kquant::kSuperBlock;
  const size_t group_bytes = nsb * kQ4KInterleavedBlockBytes;
  const uint8_t* weights = weight_bytes(p);
  const Q4KLaneMasks masks;
  for (size_t g = row_begin / kInterleavedRows; g * kInterleavedRows < row_end; ++g) {
    const uint8_t* group = weights + g * group_bytes;
    const size_t first = std::max(row_begin, g * kInterleavedRows);
    const size_t last = std::min(row_end, (g + 1) * kInterleavedRows);
    for (size_t t = 0; t < p.n_tokens; ++t) {
      const BlockQ8K* x = a.q8k_row(t);
      __m256 acc = _mm256_setzero_ps();
      for (size_t sb = 0; sb < nsb; ++sb) {
        const uint8_t* gb = group + sb * kQ4KInterleavedBlockBytes;
        const size_t ahead = static_cast<size_t>(gb - weights) + kInterleavedPrefetchBytes;
        if (t == 0 && ahead + kQ4KInterleavedBlockBytes <= p.weights.size()) {
          for (size_t line = 0; line < kQ4KInterleavedBlockBytes; line += 64) {
            _mm_prefetch(reinterpret_cast<const char*>(weights + ahead + line), _MM_HINT_T0);
          }
        }
        __m256i I, M;
        q4k_interleaved_sums(gb, x[sb], masks, I, M);
        const __m256 d = _mm256_cvtph_ps(load128(gb));
        const __m256 neg_dmin = _mm256_xor_ps(_mm256_cvtph_ps(load128(gb + 16)), _mm256_set1_ps(-0.0f));
        const __m256 dx = _mm256_set1_ps(x[sb].d);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(I), _mm256_mul_ps(d, dx), acc);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(M), _mm256_mul_ps(neg_dmin, dx), acc);
      }
      alignas(32) float lanes[kInterleavedRows];
      _mm256_store_ps(lanes, acc);
      const size_t lane0 = first - g * kInterleavedRows;
      std::memcpy(p.y + t * p.n_rows + first, lanes + lane0, (last - first) * sizeof(float));
    }
  }
}

}  // namespace
}  // namespace infertune::x86
