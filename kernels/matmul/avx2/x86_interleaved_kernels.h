#pragma once
// The matrix-vector kernels of Q4_K, Q5_K, Q6_K, Q2_K, Q3_K, IQ4_XS, Q4_0, Q5_0, MXFP4 and Q8_0 weights in the
// interleaved layout (kernels/matmul/interleaved_rows.h): each group of 8 rows is one contiguous run, its codes side by
// side in 32-bit lanes (lane r = row r), so a vector of 4 activation codes broadcast to every lane multiplies 8 rows at
// once and no row sums are reduced across lanes. The maddubs pair sums of a sub-block are added in int16 as far as
// they are exact (4-bit codes: 8 pairs of at most 2 x 15 x 128, 30720 < 2^15; 5-bit codes and MXFP4's codebook values
// + 12: 4 pairs; Q6_K's 6-bit codes: 2 pairs of at most 2 x 63 x 128) and widened by a madd with the rows' sub-block
// scales. The integers I (and M) of each row and super-block are the ones the file layout's kernels compute
// (x86_k_formats.h, x86_q8_formats.h), and the FMAs per super-block are the same in the same order, so a row's result
// is the same bits in either layout. Only AVX2 instructions: every x86 unit (avx2, avxvnni, avx512vnni) compiles the
// same code. Included ONLY by x86_dot_kernels.h, after an ISA unit's `#pragma GCC target`.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/matmul/avx2/x86_k_formats.h"
#include "kernels/matmul/avx2/x86_q8_formats.h"
#include "kernels/matmul/avx2/x86_simd_helpers.h"
#include "kernels/matmul/avx2/x86_token_passes.h"
#include "kernels/matmul/interleaved_rows.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/quantized_activations.h"
#include "kernels/quant/blocks_k.h"

namespace infertune::x86 {
namespace {

using kquant::BlockQ8K;

// The formats whose kernels read the interleaved layout (kernels/matmul/interleaved_rows.h). IQ4_XS only with
// VNNI: its codebook values are signed, and without a non-saturating byte dot the sub-block sums cannot be added in
// int16 as the other formats' are.
template <class Isa, class F>
inline constexpr bool kInterleaves = std::is_same_v<F, Q4KFormat> || std::is_same_v<F, Q6KFormat> ||
                                     std::is_same_v<F, Q4_0Format> || std::is_same_v<F, Q8_0Format> ||
                                     std::is_same_v<F, Q2KFormat> || std::is_same_v<F, Q3KFormat> ||
                                     std::is_same_v<F, Q5KFormat> || std::is_same_v<F, Q5_0Format> ||
                                     std::is_same_v<F, Mxfp4Format> ||
                                     (std::is_same_v<F, Iq4XsFormat> && Isa::kWideUnsigned);

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

// Bit `from` of every byte of v moved to bit `to`, the other bits cleared (the shift is in 16-bit lanes; what crosses
// into a neighbour byte lands outside the mask).
inline __m256i move_bit(__m256i v, int from, int to) {
  const __m256i mask = _mm256_set1_epi8(static_cast<char>(1 << to));
  if (from > to) return _mm256_and_si256(_mm256_srli_epi16(v, from - to), mask);
  return _mm256_and_si256(_mm256_slli_epi16(v, to - from), mask);
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

// The activation codes of the T tokens of a pass at one position of their rows: token t's at x[t] + offset.
template <int T>
struct PassCodes {
  const int8_t* x[T];
  // Token t's 4 codes at offset + k, in every 32-bit lane.
  __m256i word(int t, size_t offset) const { return broadcast_u32(x[t] + offset); }
};

// What the nibbles of an interleaved 4-bit layout are: the codes (Q4_K, Q4_0), their low 4 bits, the fifth in
// another vector (Q5_K, Q5_0: codes 0-31), or MXFP4's codebook indices (a byte shuffle makes them the codebook
// values + 12, codes 0-24, as Mxfp4Format's kernels take them).
enum class NibbleCode { plain, fifth_bit, mxfp4 };

// Quarter i of an interleaved 32-value unit (one vector of nibbles: low ones a row's values 8i..8i+3, high ones
// 8i+4..8i+7) dotted with each token's activation codes at `offset`..offset + 7; with fifth_bit a 5-bit format's
// codes, their fifth bits at bits i and 4 + i of `fifth`. Without VNNI, 4 maddubs pairs of 5-bit codes (4 x 2 x 31 x
// 128) or of MXFP4's (4 x 2 x 24 x 128) fill an int16, 8 would overflow it, so quarters 2-3 go to `rest`.
template <class Isa, NibbleCode kCode, int T>
inline void nibble_quarter_dots(__m256i q, __m256i fifth, int i, const PassCodes<T>& x, size_t offset,
                                SubBlockDots<Isa> (&dots)[T], SubBlockDots<Isa> (&rest)[T]) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256i lo = _mm256_and_si256(q, low4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
  if constexpr (kCode == NibbleCode::fifth_bit) {
    lo = _mm256_or_si256(lo, move_bit(fifth, i, 4));
    hi = _mm256_or_si256(hi, move_bit(fifth, 4 + i, 4));
  }
  if constexpr (kCode == NibbleCode::mxfp4) {
    const __m256i table = mxfp4_table();
    lo = _mm256_shuffle_epi8(table, lo);
    hi = _mm256_shuffle_epi8(table, hi);
  }
  const bool to_rest = kCode != NibbleCode::plain && !Isa::kWideUnsigned && i >= 2;
  for (int t = 0; t < T; ++t) {
    SubBlockDots<Isa>& sum = to_rest ? rest[t] : dots[t];
    sum.add(lo, x.word(t, offset));
    sum.add(hi, x.word(t, offset + 4));
  }
}

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

// The q8_K blocks of the T tokens of a pass at one super-block.
template <int T>
using PassBlocks = const BlockQ8K* [T];

// The activation codes of a pass's blocks, from value `first` of each.
template <int T>
inline PassCodes<T> pass_codes(const PassBlocks<T>& x, size_t first) {
  PassCodes<T> codes;
  for (int t = 0; t < T; ++t) codes.x[t] = x[t]->qs + first;
  return codes;
}

// The activation's 32-value sums as int16 pairs (X_2k, X_2k+1) at 32-bit elements 0, 1, 4, 5 (k = 0-3).
inline __m256i sub_block_sum_pairs(const BlockQ8K& x) {
  const __m256i sums32 = _mm256_madd_epi16(load256(x.bsums), _mm256_set1_epi16(1));
  return _mm256_packs_epi32(sums32, sums32);
}

// Lane r = sum_j m_j X_j of one token: the rows' 6-bit mins (`mins`: sub-blocks 0-3, 4-7) times the token's 32-value
// sums X_j, as Q4KFormat::sums makes M.
template <class Isa>
inline __m256i q4k_min_sums(const BlockQ8K& x, const __m256i (&mins)[2], const Q4KLaneMasks<Isa>& masks) {
  const __m256i sums16 = sub_block_sum_pairs(x);
  const int element[4] = {0, 1, 4, 5};
  __m256i M = _mm256_setzero_si256();
  for (int k = 0; k < 4; ++k) {
    const __m256i x_pair = _mm256_permutevar8x32_epi32(sums16, _mm256_set1_epi32(element[k]));
    const __m256i m_pair = _mm256_shuffle_epi8(mins[k / 2], masks.min[k % 2]);
    M = _mm256_add_epi32(M, _mm256_madd_epi16(m_pair, x_pair));
  }
  return M;
}

// One interleaved super-block `gb` of 8 rows against the q8_K blocks x[t] of a pass: lane r of I[t] = the row's
// sum_j s_j (codes_j . x_j), of M[t] = sum_j m_j (sum of x_j), as Q4KFormat::sums (Q5KFormat::sums with kFifthBit)
// makes them.
template <class Isa, bool kFifthBit, int T>
inline void q4k_interleaved_sums(const uint8_t* gb, const PassBlocks<T>& x, const Q4KLaneMasks<Isa>& masks,
                                 __m256i (&I)[T], __m256i (&M)[T]) {
  const __m256i high = load256(gb + 96);
  __m256i scales[2], mins[2];
  q4k_six_bit_pair(gb + 32, high, 0, scales[0], scales[1]);
  q4k_six_bit_pair(gb + 64, high, 4, mins[0], mins[1]);
  const uint8_t* codes = gb + 128;
  const PassCodes<T> xq = pass_codes(x, 0);
  for (int t = 0; t < T; ++t) I[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    SubBlockDots<Isa> dots[T], rest[T];
    const __m256i fifth = kFifthBit ? load256(gb + kQ5KInterleavedHighBits + 32 * j) : _mm256_setzero_si256();
    for (int i = 0; i < 4; ++i) {
      nibble_quarter_dots<Isa, kFifthBit ? NibbleCode::fifth_bit : NibbleCode::plain, T>(
          load256(codes + 128 * j + 32 * i), fifth, i, xq, 32 * j + 8 * i, dots, rest);
    }
    const __m256i s = _mm256_shuffle_epi8(scales[j / 4], masks.scale[j % 4]);
    for (int t = 0; t < T; ++t) {
      I[t] = _mm256_add_epi32(I[t], dots[t].scaled(s));
      if constexpr (kFifthBit && !Isa::kWideUnsigned) I[t] = _mm256_add_epi32(I[t], rest[t].scaled(s));
    }
  }
  for (int t = 0; t < T; ++t) M[t] = q4k_min_sums(*x[t], mins, masks);
}

// No software prefetch: each group of 8 rows is one contiguous run, which the hardware prefetchers follow. On a
// Zen 4 host, prefetching 4-64 KiB ahead made one-thread generation 13-25% slower for Q4_K_M, Q4_0 and Q8_0 (and
// two threads no faster): the extra instructions and L1 fills cost more than they hid.

// y[t][r] for rows [row_begin, row_end) and every token, one group of 8 rows at a time, in passes of up to kMaxTokens
// tokens: group_pass.template operator()<T>(group, t0, acc) gives the group's 8 results for tokens t0..t0 + T - 1 in
// acc[0..T) (a range that starts or ends inside a group computes the whole group and stores its part).
template <int kMaxTokens, class GroupPass>
void for_row_groups(const MatmulProblem& p, size_t row_begin, size_t row_end, size_t group_bytes,
                    GroupPass group_pass) {
  const uint8_t* weights = weight_bytes(p);
  for (size_t g = row_begin / kInterleavedRows; g * kInterleavedRows < row_end; ++g) {
    const size_t first = std::max(row_begin, g * kInterleavedRows);
    const size_t last = std::min(row_end, (g + 1) * kInterleavedRows);
    for_token_passes<kMaxTokens>(p.n_tokens, [&]<int T>(size_t t0) {
      __m256 acc[T];
      group_pass.template operator()<T>(weights + g * group_bytes, t0, acc);
      for (int t = 0; t < T; ++t) {
        alignas(32) float lanes[kInterleavedRows];
        _mm256_store_ps(lanes, acc[t]);
        std::memcpy(p.y + (t0 + t) * p.n_rows + first, lanes + (first - g * kInterleavedRows),
                    (last - first) * sizeof(float));
      }
    });
  }
}

// ---- Q4_0, Q5_0, MXFP4 and Q8_0 -------------------------------------------------------------------------

// The 32-value nibble formats: what their nibbles are, and where an interleaved block's codes start.
template <class F>
inline constexpr NibbleCode kNibbleCode = std::is_same_v<F, Q5_0Format>    ? NibbleCode::fifth_bit
                                          : std::is_same_v<F, Mxfp4Format> ? NibbleCode::mxfp4
                                                                           : NibbleCode::plain;
constexpr size_t interleaved_nibble_codes(NibbleCode code) {
  if (code == NibbleCode::fifth_bit) return kQ5_0InterleavedCodes;
  if (code == NibbleCode::mxfp4) return kMxfp4InterleavedCodes;
  return 16;
}

// One interleaved Q4_0 block `gb` of 8 rows against 32 activation codes of each token of a pass, values 0-15 at
// `first`, 16-31 at `second`: lane r of dots[t] = sum q x of row r (codes 0-15). With fifth_bit, Q5_0's (codes 0-31);
// with mxfp4, MXFP4's (codebook values + 12).
template <class Isa, NibbleCode kCode, int T>
inline void q4_0_interleaved_dots(const uint8_t* gb, const PassCodes<T>& x, size_t first, size_t second,
                                  __m256i (&out)[T]) {
  constexpr bool kFifthBit = kCode == NibbleCode::fifth_bit;
  const uint8_t* codes = gb + interleaved_nibble_codes(kCode);
  const __m256i fifth = kFifthBit ? load256(gb + kQ5_0InterleavedHighBits) : _mm256_setzero_si256();
  SubBlockDots<Isa> dots[T], rest[T];
  for (int i = 0; i < 4; ++i) {
    nibble_quarter_dots<Isa, kCode, T>(load256(codes + 32 * i), fifth, i, x, (i < 2 ? first : second) + 8 * (i % 2),
                                       dots, rest);
  }
  const __m256i one = Isa::kWideUnsigned ? _mm256_set1_epi32(1) : _mm256_set1_epi16(1);
  for (int t = 0; t < T; ++t) {
    if constexpr (kCode != NibbleCode::plain && !Isa::kWideUnsigned) {
      out[t] = _mm256_add_epi32(dots[t].scaled(one), rest[t].scaled(one));
    } else {
      out[t] = dots[t].scaled(one);
    }
  }
}

// The same for Q8_0 (signed codes): with VNNI the codes + 128 as unsigned (the caller adds -128 sum x, Q8_0Format's
// kCodeOffset), without it the sign trick (dot_signed), as Q8_0Format's kernels take them.
template <class Isa, int T>
inline void q8_0_interleaved_dots(const uint8_t* gb, const PassCodes<T>& x, size_t first, size_t second,
                                  __m256i (&dots)[T]) {
  for (int t = 0; t < T; ++t) dots[t] = _mm256_setzero_si256();
  for (int i = 0; i < 8; ++i) {
    const __m256i q = load256(gb + 16 + 32 * i);
    const __m256i u = Isa::kWideUnsigned ? flip_sign_bits(q) : q;
    const size_t offset = (i < 4 ? first : second) + 4 * (i % 4);
    for (int t = 0; t < T; ++t) {
      const __m256i xb = x.word(t, offset);
      dots[t] = Isa::kWideUnsigned ? Isa::dot(dots[t], u, xb) : dot_signed<Isa>(dots[t], q, xb);
    }
  }
}

// Bytes of one interleaved block of 8 rows of 32-value format F.
template <class F>
constexpr size_t interleaved_q8_block_bytes() {
  if constexpr (std::is_same_v<F, Q8_0Format>) return kQ8_0InterleavedBlockBytes;
  if constexpr (std::is_same_v<F, Q5_0Format>) return kQ5_0InterleavedBlockBytes;
  if constexpr (std::is_same_v<F, Mxfp4Format>) return kMxfp4InterleavedBlockBytes;
  return kQ4_0InterleavedBlockBytes;
}

// The block scales d of an interleaved block's 8 rows: f16s, or MXFP4's E8M0 exponents (kCustomScale).
template <class F>
inline __m256 interleaved_q8_scales(const uint8_t* gb) {
  if constexpr (kCustomScale<F>) return e8m0_to_half_scales8(gb);
  return _mm256_cvtph_ps(load128(gb));
}

// As matvec_k_interleaved, for Q4_0, Q5_0, MXFP4 and Q8_0: per block I = sum q x + kCodeOffset sum x, acc =
// fma(float(I), d dx, acc), as their matrix-vector kernels in the file's layout (x86_q8_formats.h) compute it.
template <class Isa, class F>
void matvec_q8_interleaved(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  constexpr size_t kBlockBytes = interleaved_q8_block_bytes<F>();
  constexpr int kOffset = F::template kCodeOffset<Isa>;
  const size_t nb = p.n_cols / 32;
  auto group_pass = [&]<int T>(const uint8_t* group, size_t t0, __m256(&acc)[T]) {
    PassCodes<T> xq;
    const float* dx[T];
    const int32_t* isums[T];
    for (int t = 0; t < T; ++t) {
      xq.x[t] = a.q8_codes(t0 + t);
      dx[t] = a.q8_scales(t0 + t);
      isums[t] = a.q8_isums(t0 + t);
      acc[t] = _mm256_setzero_ps();
    }
    for (size_t b = 0; b < nb; ++b) {
      const uint8_t* gb = group + b * kBlockBytes;
      // The codes are pair-interleaved (pair_interleave_q8): block 2p + k's halves at 64p + 16k and 64p + 32
      // + 16k; an odd last block in value order.
      const bool paired = b + 1 < nb || b % 2 == 1;
      const size_t first = paired ? 64 * (b / 2) + 16 * (b % 2) : 32 * b;
      const size_t second = paired ? first + 32 : first + 16;
      __m256i dots[T];
      if constexpr (std::is_same_v<F, Q8_0Format>) {
        q8_0_interleaved_dots<Isa, T>(gb, xq, first, second, dots);
      } else {
        q4_0_interleaved_dots<Isa, kNibbleCode<F>, T>(gb, xq, first, second, dots);
      }
      const __m256 d = interleaved_q8_scales<F>(gb);
      for (int t = 0; t < T; ++t) {
        if constexpr (kOffset != 0) dots[t] = _mm256_add_epi32(dots[t], _mm256_set1_epi32(kOffset * isums[t][b]));
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dots[t]), _mm256_mul_ps(d, _mm256_set1_ps(dx[t][b])), acc[t]);
      }
    }
  };
  for_row_groups<matvec_tokens<Isa>()>(p, row_begin, row_end, nb * kBlockBytes, group_pass);
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

// Lane r of offsets[t] += the rows' scale pairs of sub-blocks 4v..4v+3 (`scales`) times token t's 16-value sums:
// the term the formats with signed scales and offset codes (Q6_K, Q3_K, IQ4_XS through its pairs) subtract.
template <class Isa, int T>
inline void add_scale_pair_sums(const PassBlocks<T>& x, __m256i scales, int v, const Q6KLaneMasks<Isa>& masks,
                                __m256i (&offsets)[T]) {
  const __m256i pairs[2] = {Q6KLaneMasks<Isa>::pick16(scales, masks.pair[0]),
                            Q6KLaneMasks<Isa>::pick16(scales, masks.pair[1])};
  for (int t = 0; t < T; ++t) {
    for (int k = 0; k < 2; ++k) {
      const __m256i x_pair = broadcast_u32(x[t]->bsums + 4 * v + 2 * k);
      offsets[t] = _mm256_add_epi32(offsets[t], _mm256_madd_epi16(pairs[k], x_pair));
    }
  }
}

// Lane r of I[t] += s (codes . x) of one 16-value sub-block (its codes q as four 4-value words per row) and token t's
// codes at x + offset. Without VNNI, two maddubs pairs of 6-bit codes fit an int16 (2 x 16128) and four do not: the
// two halves are widened separately (`kPairsFit`: all four fit, as codes of at most 7 do).
template <class Isa, bool kPairsFit, int T>
inline void add_sub_block_dots(const __m256i (&q)[4], const PassCodes<T>& x, size_t offset, __m256i s,
                               __m256i (&I)[T]) {
  for (int t = 0; t < T; ++t) {
    SubBlockDots<Isa> d01, d23;
    d01.add(q[0], x.word(t, offset));
    d01.add(q[1], x.word(t, offset + 4));
    SubBlockDots<Isa>& rest = Isa::kWideUnsigned || kPairsFit ? d01 : d23;
    rest.add(q[2], x.word(t, offset + 8));
    rest.add(q[3], x.word(t, offset + 12));
    I[t] = _mm256_add_epi32(I[t], d01.scaled(s));
    if constexpr (!Isa::kWideUnsigned && !kPairsFit) I[t] = _mm256_add_epi32(I[t], d23.scaled(s));
  }
}

// One interleaved super-block `gb` of 8 rows against the q8_K blocks x[t] of a pass: lane r of out[t] = the row's
// sum_j s_j (codes_j . x_j - 32 sum x_j), the I of Q6KFormat::sums. Codes are 0..63, so a maddubs pair is at most
// 2 x 63 x 128 = 16128 and two of them fit an int16: each 16-value sub-block is two int16 sums, widened by madd.
template <class Isa, int T>
inline void q6k_interleaved_sums(const uint8_t* gb, const PassBlocks<T>& x, const Q6KLaneMasks<Isa>& masks,
                                 __m256i (&out)[T]) {
  const uint8_t* codes = gb + 144;
  const PassCodes<T> xq = pass_codes(x, 0);
  __m256i I[T], offsets[T];
  for (int t = 0; t < T; ++t) I[t] = offsets[t] = _mm256_setzero_si256();
  for (int v = 0; v < 4; ++v) {
    const __m256i scales = load256(gb + 16 + 32 * v);
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      const int j = 4 * v + m;
      __m256i q[4];
      q6k_sub_block_codes(codes + 96 * j, q);
      add_sub_block_dots<Isa, false, T>(q, xq, 16 * j, masks.pick_scale(scales, m), I);
    }
    add_scale_pair_sums<Isa, T>(x, scales, v, masks, offsets);
  }
  for (int t = 0; t < T; ++t) out[t] = _mm256_sub_epi32(I[t], _mm256_slli_epi32(offsets[t], 5));
}

// ---- Q2_K, Q3_K and IQ4_XS ---------------------------------------------------------------------------

// The 2-bit codes of one 16-value sub-block vector: word r of q[i] = row r's values 16j + 4i..16j + 4i + 3.
inline void two_bit_codes(__m256i v, __m256i (&q)[4]) {
  const __m256i three = _mm256_set1_epi8(3);
  q[0] = _mm256_and_si256(v, three);
  q[1] = _mm256_and_si256(_mm256_srli_epi16(v, 2), three);
  q[2] = _mm256_and_si256(_mm256_srli_epi16(v, 4), three);
  q[3] = _mm256_and_si256(_mm256_srli_epi16(v, 6), three);
}

// Q3_K's codes (0..7) of sub-block j, as two_bit_codes gives them: the third bit of value 16j + 4i + b at bit
// 4 (j % 2) + i of the sub-block pair's vector.
inline void q3k_sub_block_codes(const uint8_t* gb, int j, __m256i (&q)[4]) {
  two_bit_codes(load256(gb + kQ3KInterleavedLowBits + 32 * j), q);
  const __m256i high = load256(gb + kQ3KInterleavedHighBits + 32 * (j / 2));
  for (int i = 0; i < 4; ++i) q[i] = _mm256_or_si256(q[i], move_bit(high, 4 * (j % 2) + i, 2));
}

// 32 six-bit scales, bytes in interleaved_scale_slot order, from their low nibbles (nibble `nibble` of `low`) and top
// bits (bits `shift`, `shift` + 1 of `top`), minus 32: signed bytes.
inline __m256i six_bit_scales(__m256i low, int nibble, __m256i top, __m256i shift) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), three = _mm256_set1_epi8(3);
  const __m256i l = _mm256_and_si256(nibble == 0 ? low : _mm256_srli_epi16(low, 4), low4);
  const __m256i t = _mm256_and_si256(_mm256_srlv_epi32(top, shift), three);
  return _mm256_sub_epi8(_mm256_or_si256(l, _mm256_slli_epi16(t, 4)), _mm256_set1_epi8(32));
}

// Q3_K's signed scales of sub-blocks 4v..4v+3 of the 8 rows (slots 32v..32v+31).
inline __m256i q3k_scales(const uint8_t* gb, int v) {
  return six_bit_scales(load256(gb + kQ3KInterleavedScaleLow + 32 * (v % 2)), v / 2,
                        load256(gb + kQ3KInterleavedScaleTop), _mm256_set1_epi32(2 * v));
}

// IQ4_XS's signed scales of sub-blocks 4v..4v+3 (slots 32v..32v+31): top bits of slot k at bits 2 (k / 16) of
// byte k % 16, so the upper 128-bit lane shifts 2 more.
inline __m256i iq4xs_scales(const uint8_t* gb, int v) {
  const __m256i top = _mm256_broadcastsi128_si256(load128(gb + kIq4XsInterleavedScaleTop));
  const int s = 4 * v;
  return six_bit_scales(load256(gb + kIq4XsInterleavedScaleLow), v, top,
                        _mm256_setr_epi32(s, s, s, s, s + 2, s + 2, s + 2, s + 2));
}

// One interleaved Q2_K super-block against the blocks x[t] of a pass: lane r of I[t] = sum_j s_j (codes_j . x_j), of
// M[t] = sum_j m_j S16_j, as Q2KFormat::sums makes them (the scale bytes: s_j low nibble, m_j high).
template <class Isa, int T>
inline void q2k_interleaved_sums(const uint8_t* gb, const PassBlocks<T>& x, const Q4KLaneMasks<Isa>& masks,
                                 __m256i (&I)[T], __m256i (&M)[T]) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const PassCodes<T> xq = pass_codes(x, 0);
  for (int t = 0; t < T; ++t) I[t] = M[t] = _mm256_setzero_si256();
  for (int v = 0; v < 4; ++v) {
    const __m256i packed = load256(gb + 32 + 32 * v);
    const __m256i scales = _mm256_and_si256(packed, low4);
    const __m256i mins = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4);
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      const int j = 4 * v + m;
      __m256i q[4];
      two_bit_codes(load256(gb + kQ2KInterleavedCodes + 32 * j), q);
      // Codes of at most 3: 4 maddubs pairs fit an int16.
      add_sub_block_dots<Isa, true, T>(q, xq, 16 * j, _mm256_shuffle_epi8(scales, masks.scale[m]), I);
    }
    const __m256i min_pairs[2] = {_mm256_shuffle_epi8(mins, masks.min[0]), _mm256_shuffle_epi8(mins, masks.min[1])};
    for (int t = 0; t < T; ++t) {
      for (int k = 0; k < 2; ++k) {
        const __m256i x_pair = broadcast_u32(x[t]->bsums + 4 * v + 2 * k);
        M[t] = _mm256_add_epi32(M[t], _mm256_madd_epi16(min_pairs[k], x_pair));
      }
    }
  }
}

// One interleaved Q3_K super-block against the blocks x[t] of a pass: lane r of out[t] = sum_j s_j (codes_j . x_j -
// 4 S16_j), the I of Q3KFormat::sums (codes of at most 7: 4 maddubs pairs fit an int16).
template <class Isa, int T>
inline void q3k_interleaved_sums(const uint8_t* gb, const PassBlocks<T>& x, const Q6KLaneMasks<Isa>& masks,
                                 __m256i (&out)[T]) {
  const PassCodes<T> xq = pass_codes(x, 0);
  __m256i I[T], offsets[T];
  for (int t = 0; t < T; ++t) I[t] = offsets[t] = _mm256_setzero_si256();
  for (int v = 0; v < 4; ++v) {
    const __m256i scales = q3k_scales(gb, v);
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      const int j = 4 * v + m;
      __m256i q[4];
      q3k_sub_block_codes(gb, j, q);
      add_sub_block_dots<Isa, true, T>(q, xq, 16 * j, masks.pick_scale(scales, m), I);
    }
    add_scale_pair_sums<Isa, T>(x, scales, v, masks, offsets);
  }
  for (int t = 0; t < T; ++t) out[t] = _mm256_sub_epi32(I[t], _mm256_slli_epi32(offsets[t], 2));
}

// One interleaved IQ4_XS super-block against the blocks x[t] of a pass (VNNI only): lane r of out[t] = sum_j s_j
// (values_j . x_j), the I of Iq4XsFormat::sums. The codebook values are looked up + 128 (unsigned for VPDPBUSD) and
// the 128 taken back as 128 sum_j s_j X_j, exact integers either way.
template <class Isa, int T>
inline void iq4xs_interleaved_sums(const uint8_t* gb, const PassBlocks<T>& x, const Q6KLaneMasks<Isa>& masks,
                                   __m256i table, __m256i (&out)[T]) {
  static_assert(Isa::kWideUnsigned);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const PassCodes<T> xq = pass_codes(x, 0);
  const int element[4] = {0, 1, 4, 5};
  __m256i x_pairs[T], I[T], offsets[T];
  for (int t = 0; t < T; ++t) {
    x_pairs[t] = sub_block_sum_pairs(*x[t]);
    I[t] = offsets[t] = _mm256_setzero_si256();
  }
  for (int v = 0; v < 2; ++v) {
    const __m256i scales = iq4xs_scales(gb, v);
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
      const int j = 4 * v + m;
      SubBlockDots<Isa> dots[T];
      for (int i = 0; i < 4; ++i) {
        const __m256i q = load256(gb + kIq4XsInterleavedCodes + 128 * j + 32 * i);
        const __m256i lo = _mm256_shuffle_epi8(table, _mm256_and_si256(q, low4));
        const __m256i hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(q, 4), low4));
        for (int t = 0; t < T; ++t) {
          dots[t].add(lo, xq.word(t, 32 * j + 8 * i));
          dots[t].add(hi, xq.word(t, 32 * j + 8 * i + 4));
        }
      }
      const __m256i s = masks.pick_scale(scales, m);
      for (int t = 0; t < T; ++t) I[t] = _mm256_add_epi32(I[t], dots[t].scaled(s));
    }
    const __m256i pairs[2] = {Q6KLaneMasks<Isa>::pick16(scales, masks.pair[0]),
                              Q6KLaneMasks<Isa>::pick16(scales, masks.pair[1])};
    for (int t = 0; t < T; ++t) {
      for (int k = 0; k < 2; ++k) {
        const __m256i x_pair = _mm256_permutevar8x32_epi32(x_pairs[t], _mm256_set1_epi32(element[2 * v + k]));
        offsets[t] = _mm256_add_epi32(offsets[t], _mm256_madd_epi16(pairs[k], x_pair));
      }
    }
  }
  for (int t = 0; t < T; ++t) out[t] = _mm256_sub_epi32(I[t], _mm256_slli_epi32(offsets[t], 7));
}

// ---- the K formats' row loop ----------------------------------------------------------------------------

// Bytes of one interleaved super-block of 8 rows of K format F.
template <class F>
constexpr size_t interleaved_k_block_bytes() {
  if constexpr (std::is_same_v<F, Q4KFormat>) return kQ4KInterleavedBlockBytes;
  if constexpr (std::is_same_v<F, Q6KFormat>) return kQ6KInterleavedBlockBytes;
  if constexpr (std::is_same_v<F, Q2KFormat>) return kQ2KInterleavedBlockBytes;
  if constexpr (std::is_same_v<F, Q3KFormat>) return kQ3KInterleavedBlockBytes;
  if constexpr (std::is_same_v<F, Q5KFormat>) return kQ5KInterleavedBlockBytes;
  return kIq4XsInterleavedBlockBytes;
}

// The lane masks F's sums take: zero-extended scales and min pairs (the formats with a min: Q4_K, Q5_K, Q2_K) or
// signed scales and scale pairs.
template <class Isa, class F>
using InterleavedKMasks = std::conditional_t<(F::kDminOffset >= 0), Q4KLaneMasks<Isa>, Q6KLaneMasks<Isa>>;

// The integer terms of one interleaved super-block of F against the blocks x[t] of a pass: I[t], and M[t] for the
// formats with a min.
template <class Isa, class F, int T>
inline void interleaved_k_sums(const uint8_t* gb, const PassBlocks<T>& x, const InterleavedKMasks<Isa, F>& masks,
                               __m256i (&I)[T], __m256i (&M)[T]) {
  if constexpr (std::is_same_v<F, Q4KFormat>) q4k_interleaved_sums<Isa, false, T>(gb, x, masks, I, M);
  if constexpr (std::is_same_v<F, Q5KFormat>) q4k_interleaved_sums<Isa, true, T>(gb, x, masks, I, M);
  if constexpr (std::is_same_v<F, Q2KFormat>) q2k_interleaved_sums<Isa, T>(gb, x, masks, I, M);
  if constexpr (std::is_same_v<F, Q6KFormat>) q6k_interleaved_sums<Isa, T>(gb, x, masks, I);
  if constexpr (std::is_same_v<F, Q3KFormat>) q3k_interleaved_sums<Isa, T>(gb, x, masks, I);
  if constexpr (std::is_same_v<F, Iq4XsFormat>) iq4xs_interleaved_sums<Isa, T>(gb, x, masks, iq4_table(true), I);
}

// The K formats: y[t][r] for rows [row_begin, row_end) and every token. Per super-block acc = fma(float(I), d dx,
// acc), then for the formats with a min acc = fma(float(M), -dmin dx, acc), as the file layout's kernels compute it.
template <class Isa, class F>
void matvec_k_interleaved(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  constexpr size_t kBlockBytes = interleaved_k_block_bytes<F>();
  constexpr bool kMin = F::kDminOffset >= 0;
  const InterleavedKMasks<Isa, F> masks;
  const size_t nsb = p.n_cols / kquant::kSuperBlock;
  auto group_pass = [&]<int T>(const uint8_t* group, size_t t0, __m256(&acc)[T]) {
    const BlockQ8K* rows[T];
    for (int t = 0; t < T; ++t) {
      rows[t] = a.q8k_row(t0 + t);
      acc[t] = _mm256_setzero_ps();
    }
    for (size_t sb = 0; sb < nsb; ++sb) {
      const uint8_t* gb = group + sb * kBlockBytes;
      const __m256 d = _mm256_cvtph_ps(load128(gb));
      PassBlocks<T> x;
      for (int t = 0; t < T; ++t) x[t] = rows[t] + sb;
      __m256i I[T], M[T];
      interleaved_k_sums<Isa, F, T>(gb, x, masks, I, M);
      for (int t = 0; t < T; ++t) {
        const __m256 dx = _mm256_set1_ps(x[t]->d);
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(I[t]), _mm256_mul_ps(d, dx), acc[t]);
        if constexpr (kMin) {
          const __m256 neg_dmin = _mm256_xor_ps(_mm256_cvtph_ps(load128(gb + 16)), _mm256_set1_ps(-0.0f));
          acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(M[t]), _mm256_mul_ps(neg_dmin, dx), acc[t]);
        }
      }
    }
  };
  for_row_groups<matvec_tokens<Isa>()>(p, row_begin, row_end, nsb * kBlockBytes, group_pass);
}

// ---- decoding rows for the tiled kernels ----------------------------------------------------------------
// The prompt kernels read a row's codes 4 values (one 32-bit word) at a time, and every code vector of the interleaved
// layout, once split into codes, holds 8 rows' words side by side: word r of it is row r's next 4 values. So a group of
// 8 rows is decoded by storing its code vectors as they come, with no transposes: the low 128-bit half (rows 0-3) to
// one run, the high half (rows 4-7) to another, so that each 4-row tile reads a contiguous run, a row's word g at
// 16 g + 4 (r % 4) of its half ("group words", read at a stride of kGroupWordStride bytes).
inline constexpr size_t kGroupWordStride = 16;

// Where a block's group words go: the runs of rows 0-3 and 4-7, at the block's first word.
struct GroupWords {
  uint8_t* half[2];
  // Word `word` of the block's 8 rows (v: 32-bit lane r = row r's word).
  void store(size_t word, __m256i v) const {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(half[0] + kGroupWordStride * word), _mm256_castsi256_si128(v));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(half[1] + kGroupWordStride * word), _mm256_extracti128_si256(v, 1));
  }
  GroupWords advanced(size_t words) const {
    return {{half[0] + kGroupWordStride * words, half[1] + kGroupWordStride * words}};
  }
};

// Where one decoded row goes: its codes, block scales and integer scales, from block (or super-block) 0.
struct DecodedRowOut {
  uint8_t* codes;
  float* d;
  float* off;
  int32_t* scales;
  int32_t* coefs;
};
using LaneOuts = DecodedRowOut[kInterleavedRows];

// Each decoder below takes one interleaved block b of a group (at gb), stores the group's code words for it (`words`:
// at the block's first word) and each row's d, -dmin, scales and coefficient pairs at index b of out[lane], as
// F::unpack gives them from the file's blocks.

// A vector of 4-bit codes whose low nibbles are a row's values 8i..8i+3 and high ones 8i+4..8i+7: words 2i, 2i + 1;
// with `fifth` (a 5-bit format), their fifth bits from bits i % 4 and 4 + i % 4 of its bytes.
inline void store_nibble_words(__m256i q, const GroupWords& words, size_t i, __m256i table, bool lookup,
                               const __m256i* fifth = nullptr) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256i lo = _mm256_and_si256(q, low4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
  if (fifth) {
    const int bit = static_cast<int>(i % 4);
    lo = _mm256_or_si256(lo, move_bit(*fifth, bit, 4));
    hi = _mm256_or_si256(hi, move_bit(*fifth, 4 + bit, 4));
  }
  if (lookup) {
    lo = _mm256_shuffle_epi8(table, lo);
    hi = _mm256_shuffle_epi8(table, hi);
  }
  words.store(2 * i, lo);
  words.store(2 * i + 1, hi);
}

// Q4_K: codes 0..15, scales [8], min pairs [4], d, -dmin; Q5_K (kFifthBit): codes 0..31.
template <bool kFifthBit>
inline void q4k_unpack_words(const uint8_t* gb, size_t sb, const GroupWords& words, const LaneOuts& out) {
  for (int lane = 0; lane < 8; ++lane) {
    int32_t* scales = out[lane].scales + 8 * sb;
    out[lane].d[sb] = half_at(gb + 2 * lane);
    out[lane].off[sb] = -half_at(gb + 16 + 2 * lane);
    uint8_t mins[8];
    for (int j = 0; j < 8; ++j) {
      const int k = interleaved_scale_slot(j, lane) % 32, hi = interleaved_scale_slot(j, lane) / 32;
      const uint8_t ls = gb[32 + k], lm = gb[64 + k], top = gb[96 + k];
      scales[j] = ((ls >> (4 * hi)) & 15) | ((top >> (2 * hi)) & 3) << 4;
      mins[j] = static_cast<uint8_t>(((lm >> (4 * hi)) & 15) | ((top >> (4 + 2 * hi)) & 3) << 4);
    }
    for (int k = 0; k < 4; ++k) out[lane].coefs[4 * sb + k] = int16_pair(mins[2 * k], mins[2 * k + 1]);
  }
  for (size_t v = 0; v < 32; ++v) {  // vector v: sub-block v / 4, quarter v % 4
    const __m256i fifth = kFifthBit ? load256(gb + kQ5KInterleavedHighBits + 32 * (v / 4)) : __m256i{};
    store_nibble_words(load256(gb + 128 + 32 * v), words, v, __m256i{}, false, kFifthBit ? &fifth : nullptr);
  }
}

// Q4_0: codes 0..15 and d; Q5_0 (kFifthBit): codes 0..31.
template <bool kFifthBit>
inline void q4_0_unpack_words(const uint8_t* gb, size_t b, const GroupWords& words, const LaneOuts& out) {
  for (int lane = 0; lane < 8; ++lane) out[lane].d[b] = half_at(gb + 2 * lane);
  const uint8_t* codes = gb + (kFifthBit ? kQ5_0InterleavedCodes : 16);
  const __m256i fifth = kFifthBit ? load256(gb + kQ5_0InterleavedHighBits) : __m256i{};
  for (size_t i = 0; i < 4; ++i) {
    store_nibble_words(load256(codes + 32 * i), words, i, __m256i{}, false, kFifthBit ? &fifth : nullptr);
  }
}

// MXFP4: codebook values + 12 (as Mxfp4Format::codes gives them) and d from the E8M0 exponents.
inline void mxfp4_unpack_words(const uint8_t* gb, size_t b, const GroupWords& words, const LaneOuts& out) {
  for (int lane = 0; lane < 8; ++lane) out[lane].d[b] = basic_quant::mxfp4_scale(gb[lane]);
  const __m256i table = mxfp4_table();
  for (size_t i = 0; i < 4; ++i)
    store_nibble_words(load256(gb + kMxfp4InterleavedCodes + 32 * i), words, i, table, true);
}

// Q8_0: codes (signed, or + 128 as unsigned with kFlip, as Q8_0Format::codes gives them) and d.
template <bool kFlip>
inline void q8_0_unpack_words(const uint8_t* gb, size_t b, const GroupWords& words, const LaneOuts& out) {
  for (int lane = 0; lane < 8; ++lane) out[lane].d[b] = half_at(gb + 2 * lane);
  for (size_t i = 0; i < 8; ++i) {
    const __m256i q = load256(gb + 16 + 32 * i);
    words.store(i, kFlip ? flip_sign_bits(q) : q);
  }
}

// The signed scales [4 kVectors] of row `lane` from interleaved scale bytes (sub-blocks 4v..4v+3 at 32 v), and int16
// pairs of them times `pair_factor` ([2 kVectors]).
template <int kVectors>
inline void lane_scales(const int8_t* bytes, int lane, int pair_factor, int32_t* scales, int32_t* pairs) {
  for (int j = 0; j < 4 * kVectors; ++j) scales[j] = bytes[interleaved_scale_slot(j, lane)];
  for (int k = 0; k < 2 * kVectors; ++k) {
    pairs[k] = int16_pair(pair_factor * scales[2 * k], pair_factor * scales[2 * k + 1]);
  }
}

// The 4 code vectors of 16-value sub-block j (word r of q[i] = row r's values 16j + 4i..16j + 4i + 3): words 4j + i.
inline void store_sub_block_words(const __m256i (&q)[4], const GroupWords& words, int j) {
  for (int i = 0; i < 4; ++i) words.store(4 * static_cast<size_t>(j) + static_cast<size_t>(i), q[i]);
}

// Q6_K: codes 0..63, scales [16], scale pairs [8], d, -dmin 0.
inline void q6k_unpack_words(const uint8_t* gb, size_t sb, const GroupWords& words, const LaneOuts& out) {
  for (int lane = 0; lane < 8; ++lane) {
    out[lane].d[sb] = half_at(gb + 2 * lane);
    out[lane].off[sb] = 0;
    lane_scales<4>(reinterpret_cast<const int8_t*>(gb + 16), lane, 1, out[lane].scales + 16 * sb,
                   out[lane].coefs + 8 * sb);
  }
  for (int j = 0; j < 16; ++j) {
    __m256i q[4];
    q6k_sub_block_codes(gb + 144 + 96 * j, q);
    store_sub_block_words(q, words, j);
  }
}

// Q2_K: codes 0..3, scales [16], min pairs [8], d, -dmin.
inline void q2k_unpack_words(const uint8_t* gb, size_t sb, const GroupWords& words, const LaneOuts& out) {
  for (int lane = 0; lane < 8; ++lane) {
    int32_t* scales = out[lane].scales + 16 * sb;
    out[lane].d[sb] = half_at(gb + 2 * lane);
    out[lane].off[sb] = -half_at(gb + 16 + 2 * lane);
    int mins[16];
    for (int j = 0; j < 16; ++j) {
      const uint8_t packed = gb[32 + interleaved_scale_slot(j, lane)];
      scales[j] = packed & 15;
      mins[j] = packed >> 4;
    }
    for (int k = 0; k < 8; ++k) out[lane].coefs[8 * sb + k] = int16_pair(mins[2 * k], mins[2 * k + 1]);
  }
  for (int j = 0; j < 16; ++j) {
    __m256i q[4];
    two_bit_codes(load256(gb + kQ2KInterleavedCodes + 32 * j), q);
    store_sub_block_words(q, words, j);
  }
}

// Q3_K: codes 0..7, signed scales [16], scale pairs [8], d, -dmin 0.
inline void q3k_unpack_words(const uint8_t* gb, size_t sb, const GroupWords& words, const LaneOuts& out) {
  alignas(32) int8_t bytes[128];
  for (int v = 0; v < 4; ++v) store256(reinterpret_cast<uint8_t*>(bytes + 32 * v), q3k_scales(gb, v));
  for (int lane = 0; lane < 8; ++lane) {
    out[lane].d[sb] = half_at(gb + 2 * lane);
    out[lane].off[sb] = 0;
    lane_scales<4>(bytes, lane, 1, out[lane].scales + 16 * sb, out[lane].coefs + 8 * sb);
  }
  for (int j = 0; j < 16; ++j) {
    __m256i q[4];
    q3k_sub_block_codes(gb, j, q);
    store_sub_block_words(q, words, j);
  }
}

// IQ4_XS: codebook values (+ 128 with kUnsigned), signed scales [8], pairs of -128 x scale [4], d, -dmin 0.
template <bool kUnsigned>
inline void iq4xs_unpack_words(const uint8_t* gb, size_t sb, const GroupWords& words, const LaneOuts& out) {
  alignas(32) int8_t bytes[64];
  for (int v = 0; v < 2; ++v) store256(reinterpret_cast<uint8_t*>(bytes + 32 * v), iq4xs_scales(gb, v));
  for (int lane = 0; lane < 8; ++lane) {
    out[lane].d[sb] = half_at(gb + 2 * lane);
    out[lane].off[sb] = 0;
    lane_scales<2>(bytes, lane, -128, out[lane].scales + 8 * sb, out[lane].coefs + 4 * sb);
  }
  const __m256i table = iq4_table(kUnsigned);
  for (size_t v = 0; v < 32; ++v)
    store_nibble_words(load256(gb + kIq4XsInterleavedCodes + 32 * v), words, v, table, true);
}

// The decoder of interleaved blocks of format F: (group block, block index, the block's words, out[8]).
template <class Isa, class F>
constexpr auto interleaved_unpack() {
  if constexpr (std::is_same_v<F, Q4KFormat>) return q4k_unpack_words<false>;
  if constexpr (std::is_same_v<F, Q5KFormat>) return q4k_unpack_words<true>;
  if constexpr (std::is_same_v<F, Q6KFormat>) return q6k_unpack_words;
  if constexpr (std::is_same_v<F, Q2KFormat>) return q2k_unpack_words;
  if constexpr (std::is_same_v<F, Q3KFormat>) return q3k_unpack_words;
  if constexpr (std::is_same_v<F, Iq4XsFormat>) return iq4xs_unpack_words<!F::template kSigned<Isa>>;
  if constexpr (std::is_same_v<F, Q4_0Format>) return q4_0_unpack_words<false>;
  if constexpr (std::is_same_v<F, Q5_0Format>) return q4_0_unpack_words<true>;
  if constexpr (std::is_same_v<F, Mxfp4Format>) return mxfp4_unpack_words;
  if constexpr (std::is_same_v<F, Q8_0Format>) return q8_0_unpack_words<!F::template kSigned<Isa>>;
}

}  // namespace
}  // namespace infertune::x86
