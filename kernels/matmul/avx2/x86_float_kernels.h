#pragma once
// F32 / F16 / BF16 weight rows against float activations on 256-bit x86 vectors, and their row loop.
// Included ONLY after an ISA unit's `#pragma GCC target` (see x86_dot_kernels.h), and after <vector>: the
// standard headers must be read before the pragma so that their code stays baseline x86-64.
//
// Activation pairing, as ggml's CPU backend does it (its vec_dot_type): F16 weights meet activations
// rounded to f16, BF16 weights activations rounded to bf16, both round to nearest even; F32 weights take
// the activations as they are. The product of two such values is exact in f32 (11 + 11 resp. 8 + 8
// significant bits), so these kernels differ from llama.cpp only in the order of the f32 additions. The
// scalar reference (kernels/matmul/scalar_matmul.cpp) pairs the same way.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/matmul/avx2/x86_simd_helpers.h"
#include "kernels/matmul/matmul.h"

namespace infertune::x86 {
namespace {

// ---- activation rounding --------------------------------------------------------------------------------

// f32 -> f16 -> f32, round to nearest even (imm 0); out-of-range values become inf, as in F16C and ggml.
inline __m256 round_to_f16(__m256 v) { return _mm256_cvtph_ps(_mm256_cvtps_ph(v, 0)); }

// f32 -> bf16 -> f32, bit for bit as ggml's scalar conversion: round to nearest even on the upper 16 bits,
// a NaN kept NaN (its upper half with the quiet bit set).
inline __m256 round_to_bf16(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
  const __m256i magnitude = _mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff));
  const __m256i is_nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7f800000));
  const __m256i quiet_nan = _mm256_or_si256(bits, _mm256_set1_epi32(0x00400000));
  const __m256i chosen = _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
  return _mm256_castsi256_ps(_mm256_and_si256(chosen, _mm256_set1_epi32(static_cast<int>(0xffff0000u))));
}

// out[i] = Round(x[i]) for i < n; any n (the last n % 8 values go through a zero-padded vector).
template <__m256 (*Round)(__m256)>
void round_values(const float* x, size_t n, float* out) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, Round(_mm256_loadu_ps(x + i)));
  if (i == n) return;
  float tail[8] = {};
  std::memcpy(tail, x + i, (n - i) * sizeof(float));
  _mm256_storeu_ps(tail, Round(_mm256_loadu_ps(tail)));
  std::memcpy(out + i, tail, (n - i) * sizeof(float));
}

// The activations a problem's weights meet, [n_tokens][n_cols]: x itself for F32; for F16 / BF16, x
// rounded to the weights' type into a buffer owned by the calling thread (valid until its next call), made
// once per call for all of its rows.
inline const float* paired_activations(const MatmulProblem& p) {
  if (p.type != GgmlType::F16 && p.type != GgmlType::BF16) return p.x;
  thread_local std::vector<float> rounded;
  const size_t n = p.n_tokens * p.n_cols;
  if (rounded.size() < n) rounded.resize(n);
  if (p.type == GgmlType::F16) {
    round_values<round_to_f16>(p.x, n, rounded.data());
  } else {
    round_values<round_to_bf16>(p.x, n, rounded.data());
  }
  return rounded.data();
}

// ---- float formats against float activations ----------------------------------------------------------
// R weight rows x T tokens at a time, R * T accumulators: each weight vector is loaded (and widened) once for
// T tokens and each activation vector once for R rows (4 x 3: 7 loads per 12 FMAs, against 2 per FMA for
// one dot at a time), within the 16 vector registers of AVX2. Any row length (a scalar tail takes n % 8).
// The same tiles serve matvecs (8 x 1: eight independent chains).

inline __m256 load_f16x8(const uint8_t* p) { return _mm256_cvtph_ps(load128(p)); }
inline __m256 load_bf16x8(const uint8_t* p) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(p)), 16));
}
inline float bf16_at(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  const uint32_t f = static_cast<uint32_t>(bits) << 16;
  float v;
  std::memcpy(&v, &f, 4);
  return v;
}

// How one stored row type reads 8 values, or one, at element i (unaligned loads only).
struct F32Row {
  static __m256 load8(const uint8_t* row, size_t i) { return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i); }
  static float load1(const uint8_t* row, size_t i) {
    float v;
    std::memcpy(&v, row + 4 * i, 4);
    return v;
  }
};
struct F16Row {
  static __m256 load8(const uint8_t* row, size_t i) { return load_f16x8(row + 2 * i); }
  static float load1(const uint8_t* row, size_t i) { return half_at(row + 2 * i); }
};
struct BF16Row {
  static __m256 load8(const uint8_t* row, size_t i) { return load_bf16x8(row + 2 * i); }
  static float load1(const uint8_t* row, size_t i) { return bf16_at(row + 2 * i); }
};

// y[t * y_stride + r] for r < R, t < T: rows of n values at w + r * row_bytes, activations x + t * n. One
// accumulator per output, 8 lanes summed in k order and then across (hsum): the order of ggml's AVX2 sgemm
// (llamafile's tinyBLAS), which is why BF16 logits here equal llama.cpp's until a rounding flip.
template <class Row, int R, int T>
void dot_tile(const uint8_t* w, size_t row_bytes, const float* x, size_t n, float* y, size_t y_stride) {
  __m256 acc[R][T];
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  }
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 xv[T];
    for (int t = 0; t < T; ++t) xv[t] = _mm256_loadu_ps(x + t * n + i);
    for (int r = 0; r < R; ++r) {
      const __m256 wv = Row::load8(w + r * row_bytes, i);
      for (int t = 0; t < T; ++t) acc[r][t] = _mm256_fmadd_ps(wv, xv[t], acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      float sum = hsum(acc[r][t]);
      for (size_t j = i; j < n; ++j) sum += Row::load1(w + r * row_bytes, j) * x[t * n + j];
      y[t * y_stride + r] = sum;
    }
  }
}

// One weight row against one activation row (the kernels below are named by these).
template <class Row>
float dot_row(const uint8_t* w, const float* x, size_t n) {
  float y;
  dot_tile<Row, 1, 1>(w, 0, x, n, &y, 0);
  return y;
}
inline float dot_f32(const uint8_t* w, const float* x, size_t n) { return dot_row<F32Row>(w, x, n); }
inline float dot_f16(const uint8_t* w, const float* x, size_t n) { return dot_row<F16Row>(w, x, n); }
inline float dot_bf16(const uint8_t* w, const float* x, size_t n) { return dot_row<BF16Row>(w, x, n); }

template <auto Dot>
struct RowOf;
template <>
struct RowOf<dot_f32> {
  using type = F32Row;
};
template <>
struct RowOf<dot_f16> {
  using type = F16Row;
};
template <>
struct RowOf<dot_bf16> {
  using type = BF16Row;
};

// Rows [row_begin, row_end) for every token, in 4 x 3 tiles, then the leftover tokens (4 x 1) and rows
// (1 x 3, 1 x 1). The 4 weight rows of a tile stay in cache while all tokens pass over them.
template <class Row>
void matmul_tiled(const MatmulProblem& p, const float* x, size_t row_begin, size_t row_end) {
  constexpr int kR = 4, kT = 3;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const uint8_t* w = weight_bytes(p);
  const size_t n = p.n_cols;
  size_t r = row_begin;
  for (; r + kR <= row_end; r += kR) {
    size_t t = 0;
    for (; t + kT <= p.n_tokens; t += kT) {
      dot_tile<Row, kR, kT>(w + r * row_bytes, row_bytes, x + t * n, n, p.y + t * p.n_rows + r, p.n_rows);
    }
    for (; t < p.n_tokens; ++t) {
      dot_tile<Row, kR, 1>(w + r * row_bytes, row_bytes, x + t * n, n, p.y + t * p.n_rows + r, p.n_rows);
    }
  }
  for (; r < row_end; ++r) {
    size_t t = 0;
    for (; t + kT <= p.n_tokens; t += kT) {
      dot_tile<Row, 1, kT>(w + r * row_bytes, row_bytes, x + t * n, n, p.y + t * p.n_rows + r, p.n_rows);
    }
    for (; t < p.n_tokens; ++t) {
      dot_tile<Row, 1, 1>(w + r * row_bytes, row_bytes, x + t * n, n, p.y + t * p.n_rows + r, p.n_rows);
    }
  }
}

// One token (a matvec, bound by reading the weights): 8 rows at a time, 8 independent accumulator chains.
template <class Row>
void matvec_tiled(const MatmulProblem& p, const float* x, size_t row_begin, size_t row_end) {
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const uint8_t* w = weight_bytes(p);
  size_t r = row_begin;
  for (; r + 8 <= row_end; r += 8) dot_tile<Row, 8, 1>(w + r * row_bytes, row_bytes, x, p.n_cols, p.y + r, 1);
  for (; r < row_end; ++r) dot_tile<Row, 1, 1>(w + r * row_bytes, row_bytes, x, p.n_cols, p.y + r, 1);
}

// Each thread owns rows [row_begin, row_end); activations are paired once per call. Every output is
// summed in the same order (one accumulator, see dot_tile) whatever the tile and the batch size, so a batch
// gives the logits of one token at a time bit for bit.
template <float (*Dot)(const uint8_t*, const float*, size_t)>
void matmul_float_act(const MatmulProblem& p, size_t row_begin, size_t row_end) {
  if (row_begin >= row_end || p.n_tokens == 0) return;
  using Row = typename RowOf<Dot>::type;
  if (p.n_tokens == 1) {
    matvec_tiled<Row>(p, paired_activations(p), row_begin, row_end);
  } else {
    matmul_tiled<Row>(p, paired_activations(p), row_begin, row_end);
  }
}

}  // namespace
}  // namespace infertune::x86
