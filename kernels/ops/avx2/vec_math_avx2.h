#pragma once
// exp and the tail masks on 8-float AVX2 vectors. Included ONLY by the AVX2 and AVX-512 ops translation units
// after their `#pragma GCC target`; the anonymous namespace gives each unit its own copy.
//
// exp(x) = 2^n * e^r with n = round(x / ln 2) and r = x - n ln 2 (|r| <= ln2 / 2, ln 2 split in two so that
// n * ln2_hi is exact), e^r by its degree-7 Taylor polynomial (truncation < 6e-9 relative). 2^n is applied
// as two power-of-two factors 2^(n >> 1) and 2^(n - (n >> 1)), so every n in [-159, 128] is representable:
// results overflow to +inf above ln(FLT_MAX) and round gradually through the subnormals to exactly 0 below
// ln(2^-150) ~ -103.97, as expf does (x = -inf gives 0). Measured error against std::exp: tests/kernels
// /ops_simd_accuracy_test.cpp bounds it at 2 ulp over [-104, 89].
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace infertune::ops_x86 {
namespace {

inline __m256 exp_avx2(__m256 x) {
  // max/min with the constant first keep a NaN input NaN.
  x = _mm256_min_ps(_mm256_set1_ps(89.0f), _mm256_max_ps(_mm256_set1_ps(-110.0f), x));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i half = _mm256_srai_epi32(ni, 1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, half), bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

// Lanes [0, count) set, count <= 8: for maskload / maskstore of a row's last partial vector.
inline __m256i tail_mask_avx2(size_t count) {
  alignas(32) static constexpr int32_t kBits[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kBits + 8 - count));
}

// Sum of the 4 double lanes.
inline double hsum_pd(__m256d v) {
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

inline float hmax_ps(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

}  // namespace
}  // namespace infertune::ops_x86
