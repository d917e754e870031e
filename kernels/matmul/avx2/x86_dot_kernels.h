#pragma once
// The matrix-vector kernels of the integer weight types on 256-bit x86 vectors, and the row loops that
// choose between them and the tiled kernels (x86_tile_kernels.h) of prompt batches.
// Included ONLY by an ISA translation unit (kernels/matmul/avx2/matmul_avx2.cpp,
// kernels/matmul/avxvnni/matmul_avxvnni.cpp, kernels/matmul/avx512/matmul_avx512vnni.cpp) after its
// `#pragma GCC target`, so every function here is compiled for that unit's ISA; the anonymous namespace gives
// each unit its own copies (no ODR clash between ISAs). The unit supplies the ISA differences as the `Isa`
// policy:
//   Isa::dot(acc, u, s)            acc + per-int32-lane sums of 4 products u8 * s8
//   Isa::dot_scaled(acc, u, s, k)  acc + per-int32-lane sums of 2 int16 pair sums u8 * s8, times int16 k
//   Isa::kWideUnsigned             dot does not saturate (VNNI): codes may use all 8 bits unsigned
//   Isa::bit_bytes(bits, v)        byte j = v[j] where bit j of bits is set, else 0
//   Isa::Tile                      the tiled kernels' vector policy (x86_tile_kernels.h)
//   Isa::kMatvecRows               rows per matrix-vector group: 8 (ymm lanes) or 4 (xmm, fewer registers)
//   Isa::kMatvecTokens (optional)  most tokens a matrix-vector pass serves (default kDefaultMatvecTokens)
// Without kWideUnsigned, products are pair-summed in int16 first (maddubs), so callers keep
// 2 * |u| * |s| < 2^15.
//
// Integer types: weight codes (unsigned where the format allows, else made unsigned with the sign trick
// |w| * sign(x, w)) times int8 activation codes, summed exactly in int32 per block, then scaled in float.
// The matrix-vector kernels take Isa::kMatvecRows rows at a time, one row per float lane: each row's
// block sums (8-lane int32 vectors) are reduced exactly to one integer per row, and the block's FMAs then
// run for all rows of the group at once, in the order the formats' traits define (x86_q8_formats.h, x86_k_formats.h)
// and the tiled kernels follow per token. A small batch (continuous batching of a few sequences) takes up to
// matvec_tokens<Isa>() tokens per pass over a group: each weight block is unpacked once and dotted with every
// token of the pass, each token keeping its own accumulators and FMA order, so the bits do not depend on
// the pass. Weights are read through byte pointers at fixed field offsets: rows need not be aligned.
#include <immintrin.h>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/matmul/activation_quant.h"
#include "kernels/matmul/avx2/x86_float_kernels.h"
#include "kernels/matmul/avx2/x86_interleaved_kernels.h"
#include "kernels/matmul/avx2/x86_k_formats.h"
#include "kernels/matmul/avx2/x86_q8_formats.h"
#include "kernels/matmul/avx2/x86_simd_helpers.h"
#include "kernels/matmul/avx2/x86_tile_kernels.h"
#include "kernels/matmul/avx2/x86_token_passes.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/quantized_activations.h"
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/blocks_k.h"

namespace infertune::x86 {
namespace {

using kquant::BlockQ8K;

// ---- G rows per vector (G = Isa::kMatvecRows: 8 in ymm lanes, or 4 in xmm lanes) ---------------------

// The lane operations of a group of G rows, lane r = row r. h[q] = hadd(v[2q], v[2q + 1]) of the rows'
// 8-lane int32 sums (made as the rows come, two at a time, so that few vectors are live).
template <int G>
struct RowLanes;

template <>
struct RowLanes<8> {
  using F = __m256;
  using I = __m256i;
  static F halves(const uint8_t* const (&rows)[8], size_t offset) {
    uint64_t lo = 0, hi = 0;
    for (int i = 0; i < 4; ++i) {
      lo |= static_cast<uint64_t>(u16_at(rows[i] + offset)) << (16 * i);
      hi |= static_cast<uint64_t>(u16_at(rows[i + 4] + offset)) << (16 * i);
    }
    return _mm256_cvtph_ps(_mm_set_epi64x(static_cast<long long>(hi), static_cast<long long>(lo)));
  }
  // The E8M0 exponent bytes at `offset` of the rows as MXFP4's scales 2^(e - 128) (basic_quant::mxfp4_scale).
  static F e8m0_halves(const uint8_t* const (&rows)[8], size_t offset) {
    uint64_t bytes = 0;
    for (int i = 0; i < 8; ++i) bytes |= static_cast<uint64_t>(rows[i][offset]) << (8 * i);
    return e8m0_to_half_scale(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(bytes))));
  }
  static I add(I a, I b) { return _mm256_add_epi32(a, b); }
  static I set1(int32_t v) { return _mm256_set1_epi32(v); }
  static F zero() { return _mm256_setzero_ps(); }
  static F set1f(float v) { return _mm256_set1_ps(v); }
  static F cvt(I v) { return _mm256_cvtepi32_ps(v); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F neg(F a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static void store(F v, float* p) { _mm256_storeu_ps(p, v); }
};

template <>
struct RowLanes<4> {
  using F = __m128;
  using I = __m128i;
  static F halves(const uint8_t* const (&rows)[4], size_t offset) {
    uint64_t lo = 0;
    for (int i = 0; i < 4; ++i) lo |= static_cast<uint64_t>(u16_at(rows[i] + offset)) << (16 * i);
    return _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(lo)));
  }
  static F e8m0_halves(const uint8_t* const (&rows)[4], size_t offset) {
    uint32_t bytes = 0;
    for (int i = 0; i < 4; ++i) bytes |= static_cast<uint32_t>(rows[i][offset]) << (8 * i);
    return _mm256_castps256_ps128(e8m0_to_half_scale(_mm256_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(bytes)))));
  }
  static I add(I a, I b) { return _mm_add_epi32(a, b); }
  static I set1(int32_t v) { return _mm_set1_epi32(v); }
  static F zero() { return _mm_setzero_ps(); }
  static F set1f(float v) { return _mm_set1_ps(v); }
  static F cvt(I v) { return _mm_cvtepi32_ps(v); }
  static F mul(F a, F b) { return _mm_mul_ps(a, b); }
  static F neg(F a) { return _mm_xor_ps(a, _mm_set1_ps(-0.0f)); }
  static F fma(F a, F b, F c) { return _mm_fmadd_ps(a, b, c); }
  static void store(F v, float* p) { _mm_storeu_ps(p, v); }
};

// The G rows' 8-lane int32 sums reduced exactly to one integer per row (lane r = row r), folded as the rows
// come two at a time: h[q] = hadd(row 2q, row 2q + 1), and each pair of those at once into h[q - 1] =
// (rows 4j..4j+3: lanes 0-3 | lanes 4-7), so that G / 4 vectors per token stay live (a pass has several).
// add_pair folds on odd q, so the loops that call it are unrolled (#pragma GCC unroll): with q a runtime
// value h lives on the stack behind a branch (one token 10-15% slower, matmul_bench). The K formats' loops,
// which AVX2 would spill unrolled, take set_pair and fold_pairs instead.
template <int G>
struct RowSums {
  __m256i h[G / 2];
  // Row pair q's vectors (rows 2q, 2q + 1).
  void add_pair(int q, __m256i a, __m256i b) {
    h[q] = _mm256_hadd_epi32(a, b);
    if (q % 2 == 1) h[q - 1] = _mm256_hadd_epi32(h[q - 1], h[q]);
  }
  // The same sums, the folds left to fold_pairs() (for a loop that is not unrolled: no branch per q).
  void set_pair(int q, __m256i a, __m256i b) { h[q] = _mm256_hadd_epi32(a, b); }
  void fold_pairs() {
    for (int q = 1; q < G / 2; q += 2) h[q - 1] = _mm256_hadd_epi32(h[q - 1], h[q]);
  }
  // Lane r = the 8-lane sum of row r.
  typename RowLanes<G>::I rows() const {
    typename RowLanes<G>::I low, high;
    halves(low, high);
    return RowLanes<G>::add(low, high);
  }
  // Lanes 0-3 / 4-7 of the rows' vectors summed: row r's in lane r of `low` / `high`.
  void halves(typename RowLanes<G>::I& low, typename RowLanes<G>::I& high) const {
    if constexpr (G == 8) {
      low = _mm256_permute2x128_si256(h[0], h[2], 0x20);
      high = _mm256_permute2x128_si256(h[0], h[2], 0x31);
    } else {
      low = _mm256_castsi256_si128(h[0]);
      high = _mm256_extracti128_si256(h[0], 1);
    }
  }
};

// Rows [r0, r0 + G) of the weights; past row_end the last row again (its results are not stored).
template <int G>
inline void group_rows(const uint8_t* w, size_t row_bytes, size_t r0, size_t row_end, const uint8_t* (&rows)[G]) {
  for (size_t r = 0; r < G; ++r) rows[r] = w + std::min(r0 + r, row_end - 1) * row_bytes;
}

// The next group of G rows' weights, fetched in n_parts parts while the current group computes: going
// through G rows a block at a time is a pattern the hardware prefetchers do not follow ahead.
struct GroupPrefetch {
  const char* next;
  size_t lines, lines_per_part;
  GroupPrefetch(const uint8_t* w, size_t row_bytes, size_t r0, size_t row_end, size_t group, size_t parts)
      : next(reinterpret_cast<const char*>(w + std::min(r0 + group, row_end) * row_bytes)),
        lines((std::min(group, row_end - std::min(r0 + group, row_end)) * row_bytes + 63) / 64),
        lines_per_part((lines + parts - 1) / std::max<size_t>(parts, 1)) {}
  void part(size_t i) const {
    for (size_t l = i * lines_per_part; l < std::min(lines, (i + 1) * lines_per_part); ++l) {
      _mm_prefetch(next + 64 * l, _MM_HINT_T0);
    }
  }
};

// y[r] = acc lane r for r < nr.
template <int G>
inline void store_rows(typename RowLanes<G>::F acc, size_t nr, float* y) {
  if (nr == G) return RowLanes<G>::store(acc, y);
  float lanes[G];
  RowLanes<G>::store(acc, lanes);
  std::memcpy(y, lanes, nr * sizeof(float));
}

// ---- 32-value formats against q8 activations -----------------------------------------------------------
// Two blocks per step: their low-half codes share one vector and their high halves another (the activation
// codes are pair-interleaved to match, see pair_interleave_q8), so one int32 vector holds both blocks' sums.

// Integer dot of 32 weight codes (signed or not, per F) with 32 activation codes, added to acc.
template <class Isa, class F>
inline __m256i block_dot(__m256i acc, __m256i w, __m256i x) {
  if constexpr (F::template kSigned<Isa>) {
    return dot_signed<Isa>(acc, w, x);
  } else {
    return Isa::dot(acc, w, x);
  }
}

// The int32 sums of a block pair (lanes 0-3, 4-7) whose codes pair_codes gave, with 64 pair-interleaved
// activation codes.
// With maddubs (no VNNI) and unsigned codes of at most 6 bits (F::kMaxCode), the two halves' int16 pair sums
// are added before the one widening madd: 4 * 63 * 128 < 2^15, so the int32 sums, and the bits, are the same.
template <class Isa, class F>
inline __m256i pair_dot(__m256i lo, __m256i hi, const int8_t* xq) {
  if constexpr (requires { F::kMaxCode; }) {
    if constexpr (!Isa::kWideUnsigned && !F::template kSigned<Isa> && F::kMaxCode < 64) {
      const __m256i pairs =
          _mm256_add_epi16(_mm256_maddubs_epi16(lo, load256(xq)), _mm256_maddubs_epi16(hi, load256(xq + 32)));
      return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
    }
  }
  return block_dot<Isa, F>(block_dot<Isa, F>(_mm256_setzero_si256(), lo, load256(xq)), hi, load256(xq + 32));
}

// The numbers of block b of G rows, the same for every token: d, and m where the format has a min (f16s,
// except MXFP4's exponent: kCustomScale).
template <class F, int G>
struct Q8BlockScales {
  typename RowLanes<G>::F d, m;
  Q8BlockScales(const uint8_t* const (&rows)[G], size_t b) {
    if constexpr (kCustomScale<F>) {
      d = RowLanes<G>::e8m0_halves(rows, b * F::kBytes);  // MXFP4's, the one format with another scale
    } else {
      d = RowLanes<G>::halves(rows, b * F::kBytes);
    }
    if constexpr (F::kHasMin) m = RowLanes<G>::halves(rows, b * F::kBytes + 2);
  }
};

// Block b of G rows (lane r: row r's integer dot I) into token t's acc, per the formats' contract.
template <class Isa, class F, int G>
inline typename RowLanes<G>::F q8_block_step(typename RowLanes<G>::F acc, typename RowLanes<G>::I dots,
                                             const Q8BlockScales<F, G>& w, size_t b, const QuantizedActivations& a,
                                             size_t t) {
  using L = RowLanes<G>;
  if constexpr (F::template kCodeOffset<Isa> != 0) {
    dots = L::add(dots, L::set1(F::template kCodeOffset<Isa> * a.q8_isums(t)[b]));
  }
  acc = L::fma(L::cvt(dots), L::mul(w.d, L::set1f(a.q8_scales(t)[b])), acc);
  if constexpr (F::kHasMin) acc = L::fma(w.m, L::set1f(a.q8_sums(t)[b]), acc);
  return acc;
}

// y[t][r] for one group of G rows (nr of them stored) and tokens [t0, t0 + T). `next`: the next group's
// weights to prefetch on the way (the first pass of a group only).
template <class Isa, class F, int T>
void matvec_q8_pass(const MatmulProblem& p, const QuantizedActivations& a,
                    const uint8_t* const (&rows)[Isa::kMatvecRows], size_t r0, size_t nr, size_t t0,
                    const GroupPrefetch* next) {
  constexpr int G = Isa::kMatvecRows;
  using L = RowLanes<G>;
  const size_t nb = p.n_cols / 32;
  const int8_t* xq[T];
  typename L::F acc[T];
  for (int t = 0; t < T; ++t) {
    xq[t] = a.q8_codes(t0 + t);
    acc[t] = L::zero();
  }
  size_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    if (next) next->part(b / 2);
    // Row r's vector holds its block b in lanes 0-3 and b + 1 in lanes 4-7: the halves are the blocks.
    RowSums<G> sums[T];
#pragma GCC unroll 4
    for (int q = 0; q < G / 2; ++q) {
      // One pointer per row and block pair (b + 1 at + kBytes): separate ones run out of registers.
      const uint8_t* w0 = rows[2 * q] + b * F::kBytes;
      const uint8_t* w1 = rows[2 * q + 1] + b * F::kBytes;
      __m256i lo0, hi0, lo1, hi1;
      F::template pair_codes<Isa>(w0, w0 + F::kBytes, lo0, hi0);
      F::template pair_codes<Isa>(w1, w1 + F::kBytes, lo1, hi1);
      for (int t = 0; t < T; ++t) {
        sums[t].add_pair(q, pair_dot<Isa, F>(lo0, hi0, xq[t] + 32 * b), pair_dot<Isa, F>(lo1, hi1, xq[t] + 32 * b));
      }
    }
    const Q8BlockScales<F, G> first_w(rows, b), second_w(rows, b + 1);
    for (int t = 0; t < T; ++t) {
      typename L::I first, second;
      sums[t].halves(first, second);
      acc[t] = q8_block_step<Isa, F, G>(acc[t], first, first_w, b, a, t0 + t);
      acc[t] = q8_block_step<Isa, F, G>(acc[t], second, second_w, b + 1, a, t0 + t);
    }
  }
  if (b < nb) {  // an odd last block, in value order
    RowSums<G> sums[T];
#pragma GCC unroll 4
    for (int q = 0; q < G / 2; ++q) {
      const __m256i c0 = F::template codes<Isa>(rows[2 * q] + b * F::kBytes);
      const __m256i c1 = F::template codes<Isa>(rows[2 * q + 1] + b * F::kBytes);
      for (int t = 0; t < T; ++t) {
        const __m256i x = load256(xq[t] + 32 * b);
        sums[t].add_pair(q, block_dot<Isa, F>(_mm256_setzero_si256(), c0, x),
                         block_dot<Isa, F>(_mm256_setzero_si256(), c1, x));
      }
    }
    const Q8BlockScales<F, G> w(rows, b);
    for (int t = 0; t < T; ++t) acc[t] = q8_block_step<Isa, F, G>(acc[t], sums[t].rows(), w, b, a, t0 + t);
  }
  for (int t = 0; t < T; ++t) store_rows<G>(acc[t], nr, p.y + (t0 + t) * p.n_rows + r0);
}

// One token, G rows at a time: the pass of matvec_q8_pass with T = 1, in a loop of its own. With the row
// pointers of the pass form GCC runs out of general registers and reloads them per block (10-20% slower
// alone, matmul_bench); the float operations are the same, so the bits are too.
template <class Isa, class F>
void matvec_q8_one_token(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  constexpr int G = Isa::kMatvecRows;
  using L = RowLanes<G>;
  const size_t nb = p.n_cols / 32;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const int8_t* xq = a.q8_codes(0);
  for (size_t r0 = row_begin; r0 < row_end; r0 += G) {
    const uint8_t* rows[G];
    group_rows<G>(weight_bytes(p), row_bytes, r0, row_end, rows);
    const GroupPrefetch next(weight_bytes(p), row_bytes, r0, row_end, G, (nb + 1) / 2);
    typename L::F acc = L::zero();
    size_t b = 0;
    for (; b + 2 <= nb; b += 2) {
      next.part(b / 2);
      RowSums<G> sums;
#pragma GCC unroll 4
      for (int q = 0; q < G / 2; ++q) {
        __m256i lo0, hi0, lo1, hi1;
        F::template pair_codes<Isa>(rows[2 * q] + b * F::kBytes, rows[2 * q] + b * F::kBytes + F::kBytes, lo0, hi0);
        F::template pair_codes<Isa>(rows[2 * q + 1] + b * F::kBytes, rows[2 * q + 1] + b * F::kBytes + F::kBytes, lo1,
                                    hi1);
        sums.add_pair(q, pair_dot<Isa, F>(lo0, hi0, xq + 32 * b), pair_dot<Isa, F>(lo1, hi1, xq + 32 * b));
      }
      typename L::I first, second;
      sums.halves(first, second);
      acc = q8_block_step<Isa, F, G>(acc, first, Q8BlockScales<F, G>(rows, b), b, a, 0);
      acc = q8_block_step<Isa, F, G>(acc, second, Q8BlockScales<F, G>(rows, b + 1), b + 1, a, 0);
    }
    if (b < nb) {  // an odd last block, in value order
      RowSums<G> sums;
      const __m256i x = load256(xq + 32 * b);
#pragma GCC unroll 4
      for (int q = 0; q < G / 2; ++q) {
        const __m256i c0 = F::template codes<Isa>(rows[2 * q] + b * F::kBytes);
        const __m256i c1 = F::template codes<Isa>(rows[2 * q + 1] + b * F::kBytes);
        sums.add_pair(q, block_dot<Isa, F>(_mm256_setzero_si256(), c0, x),
                      block_dot<Isa, F>(_mm256_setzero_si256(), c1, x));
      }
      acc = q8_block_step<Isa, F, G>(acc, sums.rows(), Q8BlockScales<F, G>(rows, b), b, a, 0);
    }
    store_rows<G>(acc, std::min<size_t>(G, row_end - r0), p.y + r0);
  }
}

// y[t][r] for rows [row_begin, row_end) and every token, G rows at a time, matvec_tokens<Isa>() tokens per
// pass over a group.
template <class Isa, class F>
void matvec_q8(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  if (p.n_tokens == 1) return matvec_q8_one_token<Isa, F>(p, a, row_begin, row_end);
  constexpr int G = Isa::kMatvecRows;
  const size_t nb = p.n_cols / 32;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  for (size_t r0 = row_begin; r0 < row_end; r0 += G) {
    const uint8_t* rows[G];
    group_rows<G>(weight_bytes(p), row_bytes, r0, row_end, rows);
    const GroupPrefetch next(weight_bytes(p), row_bytes, r0, row_end, G, (nb + 1) / 2);
    const size_t nr = std::min<size_t>(G, row_end - r0);
    for_token_passes<matvec_tokens<Isa>()>(p.n_tokens, [&]<int T>(size_t t0) {
      matvec_q8_pass<Isa, F, T>(p, a, rows, r0, nr, t0, t0 == 0 ? &next : nullptr);
    });
  }
}

// ---- K formats against q8_K activations ----------------------------------------------------------------

// One group of G rows and tokens [t0, t0 + T), as matvec_q8_pass: each row's super-block is unpacked once
// (F::sums) for the T tokens.
template <class Isa, class F, int T>
void matvec_q8k_pass(const MatmulProblem& p, const QuantizedActivations& a,
                     const uint8_t* const (&rows)[Isa::kMatvecRows], size_t r0, size_t nr, size_t t0,
                     const GroupPrefetch* next) {
  constexpr int G = Isa::kMatvecRows;
  constexpr bool kMin = F::kDminOffset >= 0;
  using L = RowLanes<G>;
  const size_t nsb = p.n_cols / kquant::kSuperBlock;
  const BlockQ8K* xrow[T];
  typename L::F acc[T];
  for (int t = 0; t < T; ++t) {
    xrow[t] = a.q8k_row(t0 + t);
    acc[t] = L::zero();
  }
  for (size_t sb = 0; sb < nsb; ++sb) {
    if (next) next->part(sb);
    const BlockQ8K* x[T];
    for (int t = 0; t < T; ++t) x[t] = xrow[t] + sb;
    RowSums<G> is[T], ms[T];
    for (int q = 0; q < G / 2; ++q) {  // not unrolled, as in matvec_q8k_one_token
      __m256i s0[T], m0[T], s1[T], m1[T];
      F::template sums<Isa, T>(rows[2 * q] + sb * F::kBytes, x, s0, m0);
      F::template sums<Isa, T>(rows[2 * q + 1] + sb * F::kBytes, x, s1, m1);
      for (int t = 0; t < T; ++t) {
        is[t].set_pair(q, s0[t], s1[t]);
        if constexpr (kMin) ms[t].set_pair(q, m0[t], m1[t]);
      }
    }
    for (int t = 0; t < T; ++t) {
      is[t].fold_pairs();
      if constexpr (kMin) ms[t].fold_pairs();
    }
    const typename L::F d = L::halves(rows, sb * F::kBytes + F::kDOffset);
    typename L::F neg_dmin{};
    if constexpr (kMin) neg_dmin = L::neg(L::halves(rows, sb * F::kBytes + F::kDminOffset));
    for (int t = 0; t < T; ++t) {
      const typename L::F dx = L::set1f(x[t]->d);
      acc[t] = L::fma(L::cvt(is[t].rows()), L::mul(d, dx), acc[t]);
      if constexpr (kMin) acc[t] = L::fma(L::cvt(ms[t].rows()), L::mul(neg_dmin, dx), acc[t]);
    }
  }
  for (int t = 0; t < T; ++t) store_rows<G>(acc[t], nr, p.y + (t0 + t) * p.n_rows + r0);
}

// One token, as matvec_q8_one_token (the pass form's register pressure costs one token 10-20%).
template <class Isa, class F>
void matvec_q8k_one_token(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  constexpr int G = Isa::kMatvecRows;
  constexpr bool kMin = F::kDminOffset >= 0;
  using L = RowLanes<G>;
  const size_t nsb = p.n_cols / kquant::kSuperBlock;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const BlockQ8K* xrow = a.q8k_row(0);
  for (size_t r0 = row_begin; r0 < row_end; r0 += G) {
    const uint8_t* rows[G];
    group_rows<G>(weight_bytes(p), row_bytes, r0, row_end, rows);
    const GroupPrefetch next(weight_bytes(p), row_bytes, r0, row_end, G, nsb);
    typename L::F acc = L::zero();
    for (size_t sb = 0; sb < nsb; ++sb) {
      next.part(sb);
      const BlockQ8K* const x[1] = {xrow + sb};
      RowSums<G> is, ms;
      for (int q = 0; q < G / 2; ++q) {  // not unrolled: AVX2 would spill (Q6_K, Q3_K 25% slower)
        __m256i s0[1], m0[1], s1[1], m1[1];
        F::template sums<Isa, 1>(rows[2 * q] + sb * F::kBytes, x, s0, m0);
        F::template sums<Isa, 1>(rows[2 * q + 1] + sb * F::kBytes, x, s1, m1);
        is.set_pair(q, s0[0], s1[0]);
        if constexpr (kMin) ms.set_pair(q, m0[0], m1[0]);
      }
      is.fold_pairs();
      if constexpr (kMin) ms.fold_pairs();
      const typename L::F dx = L::set1f(x[0]->d);
      const typename L::F d = L::halves(rows, sb * F::kBytes + F::kDOffset);
      acc = L::fma(L::cvt(is.rows()), L::mul(d, dx), acc);
      if constexpr (kMin) {
        const typename L::F neg_dmin = L::neg(L::halves(rows, sb * F::kBytes + F::kDminOffset));
        acc = L::fma(L::cvt(ms.rows()), L::mul(neg_dmin, dx), acc);
      }
    }
    store_rows<G>(acc, std::min<size_t>(G, row_end - r0), p.y + r0);
  }
}

template <class Isa, class F>
void matvec_q8k(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  if (p.n_tokens == 1) return matvec_q8k_one_token<Isa, F>(p, a, row_begin, row_end);
  constexpr int G = Isa::kMatvecRows;
  const size_t nsb = p.n_cols / kquant::kSuperBlock;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  for (size_t r0 = row_begin; r0 < row_end; r0 += G) {
    const uint8_t* rows[G];
    group_rows<G>(weight_bytes(p), row_bytes, r0, row_end, rows);
    const GroupPrefetch next(weight_bytes(p), row_bytes, r0, row_end, G, nsb);
    const size_t nr = std::min<size_t>(G, row_end - r0);
    for_token_passes<matvec_tokens<Isa>()>(p.n_tokens, [&]<int T>(size_t t0) {
      matvec_q8k_pass<Isa, F, T>(p, a, rows, r0, nr, t0, t0 == 0 ? &next : nullptr);
    });
  }
}

// ---- row loops ----------------------------------------------------------------------------------------
// Each thread owns rows [row_begin, row_end). A few tokens take the matrix-vector path (each group of 8 weight rows
// is unpacked once per pass of up to matvec_tokens<Isa>() tokens while it is in cache), more run tiled: the turn is
// runs_matrix_vector (kernels/matmul/matmul.h). Both give the same bits for a token.

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
  if (a.has_panels() && !runs_matrix_vector(p.layout, p.n_tokens)) {
    return matmul_tiled<Isa, Q8Tiles<Isa, F>>(p, a, row_begin, row_end);
  }
  if constexpr (kInterleaves<Isa, F>) {
    if (p.layout == WeightLayout::interleaved8) return matvec_q8_interleaved<Isa, F>(p, a, row_begin, row_end);
  }
  matvec_q8<Isa, F>(p, a, row_begin, row_end);
}

template <class Isa, class F>
void matmul_q8k_act(const MatmulProblem& p, size_t row_begin, size_t row_end) {
  if (row_begin >= row_end || p.n_tokens == 0) return;
  const QuantizedActivations& a = problem_activations(p);
  if (a.has_panels() && !runs_matrix_vector(p.layout, p.n_tokens)) {
    return matmul_tiled<Isa, Q8kTiles<Isa, F>>(p, a, row_begin, row_end);
  }
  if constexpr (kInterleaves<Isa, F>) {
    if (p.layout == WeightLayout::interleaved8) return matvec_k_interleaved<Isa, F>(p, a, row_begin, row_end);
  }
  matvec_q8k<Isa, F>(p, a, row_begin, row_end);
}

// Every kernel of this header for one Isa, as (type, function) pairs.
struct TypedKernel {
  GgmlType type;
  MatmulFn fn;
  bool reads_interleaved = false;  // also takes WeightLayout::interleaved8 weights
};

template <class Isa>
constexpr TypedKernel kIsaKernels[] = {
    {GgmlType::Q4_K, matmul_q8k_act<Isa, Q4KFormat>, true},
    {GgmlType::Q6_K, matmul_q8k_act<Isa, Q6KFormat>, true},
    {GgmlType::Q8_0, matmul_q8_act<Isa, Q8_0Format>, true},
    {GgmlType::Q4_0, matmul_q8_act<Isa, Q4_0Format>, true},
    {GgmlType::F16, matmul_float_act<dot_f16>},
    {GgmlType::F32, matmul_float_act<dot_f32>},
    {GgmlType::BF16, matmul_float_act<dot_bf16>},
    {GgmlType::Q5_K, matmul_q8k_act<Isa, Q5KFormat>, true},
    {GgmlType::Q5_0, matmul_q8_act<Isa, Q5_0Format>, true},
    {GgmlType::Q4_1, matmul_q8_act<Isa, Q4_1Format>},
    {GgmlType::Q5_1, matmul_q8_act<Isa, Q5_1Format>},
    {GgmlType::IQ4_NL, matmul_q8_act<Isa, Iq4NlFormat>},
    {GgmlType::MXFP4, matmul_q8_act<Isa, Mxfp4Format>, true},
    {GgmlType::IQ4_XS, matmul_q8k_act<Isa, Iq4XsFormat>, kInterleaves<Isa, Iq4XsFormat>},
    {GgmlType::Q2_K, matmul_q8k_act<Isa, Q2KFormat>, true},
    {GgmlType::Q3_K, matmul_q8k_act<Isa, Q3KFormat>, true},
};

}  // namespace
}  // namespace infertune::x86
