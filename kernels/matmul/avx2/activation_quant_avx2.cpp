// The AVX2 activation quantizers. As in matmul_avx2.cpp, every header is included before the target
// pragma so that only the functions below are built for AVX2.
#include "kernels/matmul/avx2/activation_quant_avx2.h"

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/half.h"
#include "kernels/matmul/activation_quant.h"

#pragma GCC push_options
#pragma GCC target("avx2")

namespace infertune {
namespace {

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline int hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
  return _mm_cvtsi128_si32(s);
}

// Largest |x[i]| of n (a multiple of 8) values.
inline float abs_max(const float* x, size_t n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 m = _mm256_setzero_ps();
  for (size_t i = 0; i < n; i += 8) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)));
  return hmax(m);
}

// The scale of a block with this largest magnitude and its inverse, as the scalar quantizer has them.
inline void block_scale(float amax, float& d, float& inv) {
  d = amax / 127.0f;
  inv = d != 0 ? 1.0f / d : 0.0f;
}

// 32 values times inv rounded to int8 codes at qs (|code| <= 127 as |x| <= amax); the codes' int32 values
// as two 16-value halves (for their sums).
inline void quantize32(const float* x, __m256 inv, int8_t* qs, __m256i& half0, __m256i& half1) {
  const __m256i i0 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), inv));
  const __m256i i1 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8), inv));
  const __m256i i2 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16), inv));
  const __m256i i3 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 24), inv));
  // packs work within 128-bit lanes: bytes come out as 4-value runs of i0 i1 i2 i3 (low lanes), then the
  // same of the high lanes; one permute of 32-bit runs restores value order.
  const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
  const __m256i ordered = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs), ordered);
  half0 = _mm256_add_epi32(i0, i1);
  half1 = _mm256_add_epi32(i2, i3);
}

}  // namespace

void quantize_row_q8_avx2(const float* x, size_t n, int8_t* codes, float* d, float* dsum, int32_t* isum) {
  for (size_t b = 0; b < n / 32; ++b) {
    const float* xb = x + 32 * b;
    float scale, inv;
    block_scale(abs_max(xb, 32), scale, inv);
    __m256i h0, h1;
    quantize32(xb, _mm256_set1_ps(inv), codes + 32 * b, h0, h1);
    d[b] = f16_to_f32(f32_to_f16(scale));
    const int sum = hsum_i32(_mm256_add_epi32(h0, h1));
    dsum[b] = q8_offset_sum(scale, sum);
    if (isum) isum[b] = sum;
  }
}

void quantize_row_q8k_avx2(const float* x, size_t n, kquant::BlockQ8K* out) {
  for (size_t b = 0; b < n / kquant::kSuperBlock; ++b) {
    const float* xb = x + kquant::kSuperBlock * b;
    float scale, inv;
    block_scale(abs_max(xb, kquant::kSuperBlock), scale, inv);
    const __m256 vinv = _mm256_set1_ps(inv);
    kquant::BlockQ8K& y = out[b];
    y.d = scale;
    for (int c = 0; c < kquant::kSuperBlock / 32; ++c) {
      __m256i h0, h1;
      quantize32(xb + 32 * c, vinv, y.qs + 32 * c, h0, h1);
      y.bsums[2 * c] = static_cast<int16_t>(hsum_i32(h0));
      y.bsums[2 * c + 1] = static_cast<int16_t>(hsum_i32(h1));
    }
  }
}

}  // namespace infertune

#pragma GCC pop_options
