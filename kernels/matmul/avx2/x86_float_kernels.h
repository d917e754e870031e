#pragma once
// F32 / F16 / BF16 weight rows against float activations on 256-bit x86 vectors, and their row loop.
// Included ONLY after an ISA unit's `#pragma GCC target` (see x86_dot_kernels.h).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/matmul/avx2/x86_simd_helpers.h"
#include "kernels/matmul/matmul.h"

namespace infertune::x86 {
namespace {

// ---- float formats against float activations ----------------------------------------------------------
// n values, any n (the scalar tail handles the last n % 8).

inline float dot_f32(const uint8_t* w, const float* x, size_t n) {
  const auto* wf = reinterpret_cast<const float*>(w);  // unaligned loads only (loadu / memcpy)
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(wf + i), _mm256_loadu_ps(x + i), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(wf + i + 8), _mm256_loadu_ps(x + i + 8), a1);
    a2 = _mm256_fmadd_ps(_mm256_loadu_ps(wf + i + 16), _mm256_loadu_ps(x + i + 16), a2);
    a3 = _mm256_fmadd_ps(_mm256_loadu_ps(wf + i + 24), _mm256_loadu_ps(x + i + 24), a3);
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(wf + i), _mm256_loadu_ps(x + i), a0);
  float sum = hsum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  for (; i < n; ++i) {
    float v;
    std::memcpy(&v, w + 4 * i, 4);
    sum += v * x[i];
  }
  return sum;
}

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

// F16 / BF16 rows: 2-byte values widened to float 8 at a time.
template <__m256 (*Load8)(const uint8_t*), float (*Load1)(const uint8_t*)>
float dot_half_row(const uint8_t* w, const float* x, size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_fmadd_ps(Load8(w + 2 * i), _mm256_loadu_ps(x + i), a0);
    a1 = _mm256_fmadd_ps(Load8(w + 2 * i + 16), _mm256_loadu_ps(x + i + 8), a1);
    a2 = _mm256_fmadd_ps(Load8(w + 2 * i + 32), _mm256_loadu_ps(x + i + 16), a2);
    a3 = _mm256_fmadd_ps(Load8(w + 2 * i + 48), _mm256_loadu_ps(x + i + 24), a3);
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(Load8(w + 2 * i), _mm256_loadu_ps(x + i), a0);
  float sum = hsum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  for (; i < n; ++i) sum += Load1(w + 2 * i) * x[i];
  return sum;
}

inline float dot_f16(const uint8_t* w, const float* x, size_t n) { return dot_half_row<load_f16x8, half_at>(w, x, n); }
inline float dot_bf16(const uint8_t* w, const float* x, size_t n) {
  return dot_half_row<load_bf16x8, bf16_at>(w, x, n);
}

// Each thread owns rows [row_begin, row_end); every weight row is dotted with all tokens while in cache.

template <float (*Dot)(const uint8_t*, const float*, size_t)>
void matmul_float_act(const MatmulProblem& p, size_t row_begin, size_t row_end) {
  if (row_begin >= row_end || p.n_tokens == 0) return;
  const size_t row_bytes = p.weights.size() / p.n_rows;
  const uint8_t* w = weight_bytes(p);
  for (size_t r = row_begin; r < row_end; ++r) {
    for (size_t t = 0; t < p.n_tokens; ++t) {
      p.y[t * p.n_rows + r] = Dot(w + r * row_bytes, p.x + t * p.n_cols, p.n_cols);
    }
  }
}

}  // namespace
}  // namespace infertune::x86
