#pragma once
// F32 / F16 / BF16 weight rows against float activations on 512-bit vectors, and their row loops: the
// AVX-512 counterpart of kernels/matmul/avx2/x86_float_kernels.h, with the same activation pairing (F16
// weights meet activations rounded to f16, BF16 to bf16, F32 the activations unchanged; the rounding is
// that header's), the same row / token split and the same contract per call. Included ONLY after an AVX-512
// unit's `#pragma GCC target` (avx512f, avx512bw, avx512vl, f16c, fma), after x86_float_kernels.h.
//
// Each output is one 16-lane accumulator summed over the row in steps of Row::kStep values (a last partial
// step is a masked load: zeros beyond the row), then across its lanes (hsum512). That is the order of
// ggml's AVX-512 sgemm (llamafile's tinyBLAS, KN = 16 floats or 32 bf16, _mm512_reduce_add_ps), and it does
// not depend on the tile an output is computed in: a batch gives each token's results bit for bit as a
// matvec of that token does.
//
// A Row policy says how one stored row type meets its activations:
//   Act                       the activation element the kernel reads (float, or a bf16 code)
//   kStep                     values per step (16, or 32 for bf16 pairs)
//   W weights(row, i, mask)   the step's weight vector at value i; lanes off the mask (a partial step) zero
//   X acts(x, i, mask)        the activations of the same values
//   fma(acc, w, x)            acc + the lanes' products
//   paired(problem)           the problem's activations as Act, [n_tokens][n_cols]
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/matmul/avx2/x86_float_kernels.h"
#include "kernels/matmul/avx2/x86_simd_helpers.h"
#include "kernels/matmul/matmul.h"

namespace infertune::x86 {
namespace {

// The lanes' sum: the two 256-bit halves added, then hsum (the order of _mm512_reduce_add_ps).
inline float hsum512(__m512 v) {
  const __m256 high = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));  // avx512f (no dq)
  return hsum(_mm256_add_ps(_mm512_castps512_ps256(v), high));
}

// Lanes [0, count) set, count <= 16 resp. 32.
inline __mmask16 first_lanes16(size_t count) {
  return static_cast<__mmask16>(count >= 16 ? 0xffffu : (1u << count) - 1);
}
inline __mmask32 first_lanes32(size_t count) { return count >= 32 ? 0xffffffffu : (1u << count) - 1; }

// Rows whose values widen to f32 lanes, against float activations (already paired).
struct WideningRow {
  using Act = float;
  using W = __m512;
  using X = __m512;
  static constexpr size_t kStep = 16;
  static X acts(const float* x, size_t i, __mmask16 m) { return _mm512_maskz_loadu_ps(m, x + i); }
  static __m512 fma(__m512 acc, W w, X x) { return _mm512_fmadd_ps(w, x, acc); }
  static const float* paired(const MatmulProblem& p) { return paired_activations(p); }
};

struct F32Row512 : WideningRow {
  static W weights(const uint8_t* row, size_t i, __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(row) + i);
  }
};
struct F16Row512 : WideningRow {
  static W weights(const uint8_t* row, size_t i, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + 2 * i));
  }
};
// bf16 is the upper half of an f32: widened by a shift.
struct BF16Row512 : WideningRow {
  static W weights(const uint8_t* row, size_t i, __mmask16 m) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, row + 2 * i)), 16));
  }
};

// acc[r][t] += the products of values [i, i + kStep) of row r and token t, lanes off the mask m excluded.
template <class Row, int R, int T, class Mask>
[[gnu::always_inline]] inline void accumulate_step(__m512 (&acc)[R][T], const uint8_t* w, size_t row_bytes,
                                                   const typename Row::Act* x, size_t n, size_t i, Mask m) {
  typename Row::X xv[T];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) xv[t] = Row::acts(x + t * n, i, m);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const typename Row::W wv = Row::weights(w + r * row_bytes, i, m);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[r][t] = Row::fma(acc[r][t], wv, xv[t]);
  }
}

// y[t * y_stride + r] for r < R, t < T: rows of n values at w + r * row_bytes, activations x + t * n (see
// the top of this file for the order of the sums). Full steps with plain loads (the all-lanes mask folds
// away), then at most one masked step.
template <class Row, int R, int T>
void dot_tile_512(const uint8_t* w, size_t row_bytes, const typename Row::Act* x, size_t n, float* y, size_t y_stride) {
  constexpr size_t kStep = Row::kStep;
  // The loops over r and t unrolled from the start, so that GCC keeps acc in registers (left to its own
  // limits it keeps a copy of the 24 accumulators of a 4 x 6 tile on the stack, stored every step).
  __m512 acc[R][T];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
  }
  size_t i = 0;
  if constexpr (kStep == 16) {
    for (; i + kStep <= n; i += kStep) accumulate_step<Row>(acc, w, row_bytes, x, n, i, __mmask16{0xffff});
    if (i < n) accumulate_step<Row>(acc, w, row_bytes, x, n, i, first_lanes16(n - i));
  } else {
    for (; i + kStep <= n; i += kStep) accumulate_step<Row>(acc, w, row_bytes, x, n, i, __mmask32{0xffffffffu});
    if (i < n) accumulate_step<Row>(acc, w, row_bytes, x, n, i, first_lanes32(n - i));
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = hsum512(acc[r][t]);
  }
}

// R rows against `left` tokens (0 < left <= T) in one tile of exactly that many (the shape chosen at run time).
template <class Row, int R, int T>
void tile_of_tokens(size_t left, const uint8_t* w, size_t row_bytes, const typename Row::Act* x, size_t n, float* y,
                    size_t n_rows) {
  if constexpr (T > 0) {
    if (left == T) return dot_tile_512<Row, R, T>(w, row_bytes, x, n, y, n_rows);
    tile_of_tokens<Row, R, T - 1>(left, w, row_bytes, x, n, y, n_rows);
  }
}

// R rows against tokens [0, n_tokens): tiles of kT tokens, then one tile of the tokens left (fewer than kT).
template <class Row, int R, int kT>
void rows_against_tokens(const uint8_t* w, size_t row_bytes, const typename Row::Act* x, size_t n, size_t n_tokens,
                         float* y, size_t n_rows) {
  size_t t = 0;
  for (; t + kT <= n_tokens; t += kT) dot_tile_512<Row, R, kT>(w, row_bytes, x + t * n, n, y + t * n_rows, n_rows);
  if (t < n_tokens) tile_of_tokens<Row, R, kT - 1>(n_tokens - t, w, row_bytes, x + t * n, n, y + t * n_rows, n_rows);
}

// Rows [row_begin, row_end) for every token, in 4 x 6 tiles (24 accumulators, 6 activation vectors and a
// weight vector: 31 of the 32 registers; 10 loads per 24 FMAs), the rows left one at a time. The 4 weight
// rows of a tile stay in cache while all tokens pass over them.
template <class Row>
void matmul_tiled_512(const MatmulProblem& p, const typename Row::Act* x, size_t row_begin, size_t row_end) {
  constexpr int kR = 4, kT = 6;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const uint8_t* w = weight_bytes(p);
  const size_t n = p.n_cols;
  size_t r = row_begin;
  for (; r + kR <= row_end; r += kR) {
    rows_against_tokens<Row, kR, kT>(w + r * row_bytes, row_bytes, x, n, p.n_tokens, p.y + r, p.n_rows);
  }
  for (; r < row_end; ++r) {
    rows_against_tokens<Row, 1, kT>(w + r * row_bytes, row_bytes, x, n, p.n_tokens, p.y + r, p.n_rows);
  }
}

// One token (a matvec, bound by reading the weights): 8 rows at a time, 8 independent accumulator chains.
template <class Row>
void matvec_tiled_512(const MatmulProblem& p, const typename Row::Act* x, size_t row_begin, size_t row_end) {
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const uint8_t* w = weight_bytes(p);
  size_t r = row_begin;
  for (; r + 8 <= row_end; r += 8) dot_tile_512<Row, 8, 1>(w + r * row_bytes, row_bytes, x, p.n_cols, p.y + r, 1);
  for (; r < row_end; ++r) dot_tile_512<Row, 1, 1>(w + r * row_bytes, row_bytes, x, p.n_cols, p.y + r, 1);
}

// Each thread owns rows [row_begin, row_end); activations are paired once per call.
template <class Row>
void matmul_float_act_512(const MatmulProblem& p, size_t row_begin, size_t row_end) {
  if (row_begin >= row_end || p.n_tokens == 0) return;
  const typename Row::Act* x = Row::paired(p);
  if (p.n_tokens == 1) {
    matvec_tiled_512<Row>(p, x, row_begin, row_end);
  } else {
    matmul_tiled_512<Row>(p, x, row_begin, row_end);
  }
}

// The 512-bit kernel of a float weight type; null for the other types.
inline MatmulFn float_kernel_512(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
      return matmul_float_act_512<F32Row512>;
    case GgmlType::F16:
      return matmul_float_act_512<F16Row512>;
    case GgmlType::BF16:
      return matmul_float_act_512<BF16Row512>;
    default:
      return nullptr;
  }
}

}  // namespace
}  // namespace infertune::x86
