#pragma once
// The matrix-vector kernels of the integer weight types on 256-bit x86 vectors, and the row loops that
// choose between them and the tiled kernels (x86_tile_kernels.h) of prompt batches.
// Included ONLY by an ISA translation unit (kernels/matmul/avx2/matmul_avx2.cpp,
// kernels/matmul/avx512/matmul_avx512vnni.cpp) after its `#pragma GCC target`, so every function here is
// compiled for that unit's ISA; the anonymous namespace gives each unit its own copies (no ODR clash between
// ISAs). The unit supplies the ISA differences as the `Isa` policy:
//   Isa::dot(acc, u, s)            acc + per-int32-lane sums of 4 products u8 * s8
//   Isa::dot_scaled(acc, u, s, k)  acc + per-int32-lane sums of 2 int16 pair sums u8 * s8, times int16 k
//   Isa::kWideUnsigned             dot does not saturate (VNNI): codes may use all 8 bits unsigned
//   Isa::bit_bytes(bits, v)        byte j = v[j] where bit j of bits is set, else 0
//   Isa::Tile                      the tiled kernels' vector policy (x86_tile_kernels.h)
//   Isa::kMatvecRows               rows per matrix-vector group: 8 (ymm lanes) or 4 (xmm, fewer registers)
// Without kWideUnsigned, products are pair-summed in int16 first (maddubs), so callers keep
// 2 * |u| * |s| < 2^15.
//
// Integer types: weight codes (unsigned where the format allows, else made unsigned with the sign trick
// |w| * sign(x, w)) times int8 activation codes, summed exactly in int32 per block, then scaled in float.
// The matrix-vector kernels take Isa::kMatvecRows rows at a time, one row per float lane: each row's
// block sums (8-lane int32 vectors) are reduced exactly to one integer per row, and the block's FMAs then
// run for all rows of the group at once, in the order the formats' traits define (x86_q8_formats.h, x86_k_formats.h)
// and the tiled kernels follow per token. Weights are read through byte pointers at fixed field offsets: rows need not
// be aligned.
#include <immintrin.h>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/matmul/activation_quant.h"
#include "kernels/matmul/avx2/x86_float_kernels.h"
#include "kernels/matmul/avx2/x86_k_formats.h"
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

// ---- G rows per vector (G = Isa::kMatvecRows: 8 in ymm lanes, or 4 in xmm lanes) ---------------------

// The lane operations of a group of G rows, lane r = row r. h[q] = hadd(v[2q], v[2q + 1]) of the rows'
// 8-lane int32 sums (made as the rows come, two at a time, so that few vectors are live).
template <int G>
struct RowLanes;

template <>
struct RowLanes<8> {
  using F = __m256;
  using I = __m256i;
  // Lanes 0-3 / 4-7 of every row's vector summed: rows 0-7 of `low` / `high`.
  static void reduce_halves(const __m256i (&h)[4], I& low, I& high) {
    const __m256i ab = _mm256_hadd_epi32(h[0], h[1]);  // rows 0-3: (lanes 0-3 | lanes 4-7)
    const __m256i cd = _mm256_hadd_epi32(h[2], h[3]);  // rows 4-7
    low = _mm256_permute2x128_si256(ab, cd, 0x20);
    high = _mm256_permute2x128_si256(ab, cd, 0x31);
  }
  static F halves(const uint8_t* const (&rows)[8], size_t offset) {
    uint64_t lo = 0, hi = 0;
    for (int i = 0; i < 4; ++i) {
      lo |= static_cast<uint64_t>(u16_at(rows[i] + offset)) << (16 * i);
      hi |= static_cast<uint64_t>(u16_at(rows[i + 4] + offset)) << (16 * i);
    }
    return _mm256_cvtph_ps(_mm_set_epi64x(static_cast<long long>(hi), static_cast<long long>(lo)));
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
  static void reduce_halves(const __m256i (&h)[2], I& low, I& high) {
    const __m256i ab = _mm256_hadd_epi32(h[0], h[1]);  // rows 0-3: (lanes 0-3 | lanes 4-7)
    low = _mm256_castsi256_si128(ab);
    high = _mm256_extracti128_si256(ab, 1);
  }
  static F halves(const uint8_t* const (&rows)[4], size_t offset) {
    uint64_t lo = 0;
    for (int i = 0; i < 4; ++i) lo |= static_cast<uint64_t>(u16_at(rows[i] + offset)) << (16 * i);
    return _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(lo)));
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

// Lane r = the sum of the 8 lanes of row r's vector.
template <int G>
inline typename RowLanes<G>::I reduce_rows(const __m256i (&h)[G / 2]) {
  typename RowLanes<G>::I low, high;
  RowLanes<G>::reduce_halves(h, low, high);
  return RowLanes<G>::add(low, high);
}

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

// The int32 sums of blocks b0 and b0 + kBytes (lanes 0-3, 4-7) with 64 pair-interleaved activation codes.
template <class Isa, class F>
inline __m256i pair_dot(const uint8_t* b0, const int8_t* xq) {
  __m256i lo, hi;
  F::template pair_codes<Isa>(b0, b0 + F::kBytes, lo, hi);
  return block_dot<Isa, F>(block_dot<Isa, F>(_mm256_setzero_si256(), lo, load256(xq)), hi, load256(xq + 32));
}

// Block b of G rows (lane r: row r's integer dot I) into acc, per the formats' contract.
template <class Isa, class F, int G>
inline typename RowLanes<G>::F q8_block_step(typename RowLanes<G>::F acc, typename RowLanes<G>::I dots,
                                             const uint8_t* const (&rows)[G], size_t b, const QuantizedActivations& a,
                                             size_t t) {
  using L = RowLanes<G>;
  if constexpr (F::template kCodeOffset<Isa> != 0) {
    dots = L::add(dots, L::set1(F::template kCodeOffset<Isa> * a.q8_isums(t)[b]));
  }
  const typename L::F d = L::halves(rows, b * F::kBytes);
  acc = L::fma(L::cvt(dots), L::mul(d, L::set1f(a.q8_scales(t)[b])), acc);
  if constexpr (F::kHasMin) acc = L::fma(L::halves(rows, b * F::kBytes + 2), L::set1f(a.q8_sums(t)[b]), acc);
  return acc;
}

// y[t][r] for rows [row_begin, row_end) and every token, G rows at a time.
template <class Isa, class F>
void matvec_q8(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  constexpr int G = Isa::kMatvecRows;
  using L = RowLanes<G>;
  const size_t nb = p.n_cols / 32;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  for (size_t r0 = row_begin; r0 < row_end; r0 += G) {
    const uint8_t* rows[G];
    group_rows<G>(weight_bytes(p), row_bytes, r0, row_end, rows);
    const GroupPrefetch next(weight_bytes(p), row_bytes, r0, row_end, G, (nb + 1) / 2);
    for (size_t t = 0; t < p.n_tokens; ++t) {
      const int8_t* xq = a.q8_codes(t);
      typename L::F acc = L::zero();
      size_t b = 0;
      for (; b + 2 <= nb; b += 2) {
        if (t == 0) next.part(b / 2);
        // Row r's vector holds its block b in lanes 0-3 and b + 1 in lanes 4-7: the halves are the blocks.
        __m256i h[G / 2];
        for (int q = 0; q < G / 2; ++q) {
          h[q] = _mm256_hadd_epi32(pair_dot<Isa, F>(rows[2 * q] + b * F::kBytes, xq + 32 * b),
                                   pair_dot<Isa, F>(rows[2 * q + 1] + b * F::kBytes, xq + 32 * b));
        }
        typename L::I first, second;
        L::reduce_halves(h, first, second);
        acc = q8_block_step<Isa, F, G>(acc, first, rows, b, a, t);
        acc = q8_block_step<Isa, F, G>(acc, second, rows, b + 1, a, t);
      }
      if (b < nb) {  // an odd last block, in value order
        const auto dot = [&](int r) {
          return block_dot<Isa, F>(_mm256_setzero_si256(), F::template codes<Isa>(rows[r] + b * F::kBytes),
                                   load256(xq + 32 * b));
        };
        __m256i h[G / 2];
        for (int q = 0; q < G / 2; ++q) h[q] = _mm256_hadd_epi32(dot(2 * q), dot(2 * q + 1));
        acc = q8_block_step<Isa, F, G>(acc, reduce_rows<G>(h), rows, b, a, t);
      }
      store_rows<G>(acc, std::min<size_t>(G, row_end - r0), p.y + t * p.n_rows + r0);
    }
  }
}

// ---- K formats against q8_K activations ----------------------------------------------------------------

template <class Isa, class F>
void matvec_q8k(const MatmulProblem& p, const QuantizedActivations& a, size_t row_begin, size_t row_end) {
  constexpr int G = Isa::kMatvecRows;
  using L = RowLanes<G>;
  const size_t nsb = p.n_cols / kquant::kSuperBlock;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  for (size_t r0 = row_begin; r0 < row_end; r0 += G) {
    const uint8_t* rows[G];
    group_rows<G>(weight_bytes(p), row_bytes, r0, row_end, rows);
    const GroupPrefetch next(weight_bytes(p), row_bytes, r0, row_end, G, nsb);
    for (size_t t = 0; t < p.n_tokens; ++t) {
      const BlockQ8K* x = a.q8k_row(t);
      typename L::F acc = L::zero();
      for (size_t sb = 0; sb < nsb; ++sb) {
        if (t == 0) next.part(sb);
        __m256i hs[G / 2], hm[G / 2];
        for (int q = 0; q < G / 2; ++q) {
          __m256i s0, m0, s1, m1;
          F::template sums<Isa>(rows[2 * q] + sb * F::kBytes, x[sb], s0, m0);
          F::template sums<Isa>(rows[2 * q + 1] + sb * F::kBytes, x[sb], s1, m1);
          hs[q] = _mm256_hadd_epi32(s0, s1);
          if constexpr (F::kDminOffset >= 0) hm[q] = _mm256_hadd_epi32(m0, m1);
        }
        const typename L::F dx = L::set1f(x[sb].d);
        const typename L::F d = L::halves(rows, sb * F::kBytes + F::kDOffset);
        acc = L::fma(L::cvt(reduce_rows<G>(hs)), L::mul(d, dx), acc);
        if constexpr (F::kDminOffset >= 0) {
          const typename L::F neg_dmin = L::neg(L::halves(rows, sb * F::kBytes + F::kDminOffset));
          acc = L::fma(L::cvt(reduce_rows<G>(hm)), L::mul(neg_dmin, dx), acc);
        }
      }
      store_rows<G>(acc, std::min<size_t>(G, row_end - r0), p.y + t * p.n_rows + r0);
    }
  }
}

// ---- row loops ----------------------------------------------------------------------------------------
// Each thread owns rows [row_begin, row_end). Fewer than kMinPanelTokens tokens take the matrix-vector
// path (each group of 8 weight rows meets every token while it is in cache); from kMinPanelTokens on they
// run tiled. Both give the same bits for a token.

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
  if (a.has_panels()) return matmul_tiled<Isa, Q8Tiles<Isa, F>>(p, a, row_begin, row_end);
  matvec_q8<Isa, F>(p, a, row_begin, row_end);
}

template <class Isa, class F>
void matmul_q8k_act(const MatmulProblem& p, size_t row_begin, size_t row_end) {
  if (row_begin >= row_end || p.n_tokens == 0) return;
  const QuantizedActivations& a = problem_activations(p);
  if (a.has_panels()) return matmul_tiled<Isa, Q8kTiles<Isa, F>>(p, a, row_begin, row_end);
  matvec_q8k<Isa, F>(p, a, row_begin, row_end);
}

// Every kernel of this header for one Isa, as (type, function) pairs.
struct TypedKernel {
  GgmlType type;
  MatmulFn fn;
};

template <class Isa>
constexpr TypedKernel kIsaKernels[] = {
    {GgmlType::Q4_K, matmul_q8k_act<Isa, Q4KFormat>},     {GgmlType::Q6_K, matmul_q8k_act<Isa, Q6KFormat>},
    {GgmlType::Q8_0, matmul_q8_act<Isa, Q8_0Format>},     {GgmlType::Q4_0, matmul_q8_act<Isa, Q4_0Format>},
    {GgmlType::F16, matmul_float_act<dot_f16>},           {GgmlType::F32, matmul_float_act<dot_f32>},
    {GgmlType::BF16, matmul_float_act<dot_bf16>},         {GgmlType::Q5_K, matmul_q8k_act<Isa, Q5KFormat>},
    {GgmlType::Q5_0, matmul_q8_act<Isa, Q5_0Format>},     {GgmlType::Q4_1, matmul_q8_act<Isa, Q4_1Format>},
    {GgmlType::Q5_1, matmul_q8_act<Isa, Q5_1Format>},     {GgmlType::IQ4_NL, matmul_q8_act<Isa, Iq4NlFormat>},
    {GgmlType::IQ4_XS, matmul_q8k_act<Isa, Iq4XsFormat>}, {GgmlType::Q2_K, matmul_q8k_act<Isa, Q2KFormat>},
    {GgmlType::Q3_K, matmul_q8k_act<Isa, Q3KFormat>},
};

}  // namespace
}  // namespace infertune::x86
