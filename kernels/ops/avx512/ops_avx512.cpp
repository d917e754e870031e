// The "avx512" ops variant; built like kernels/ops/avx2/ops_avx2.cpp (headers before the target pragma).
#include "kernels/ops/avx512/ops_avx512.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/cpu_features.h"
#include "kernels/ops/avx2/ops_avx2.h"
#include "kernels/ops/gelu.h"
#include "kernels/ops/ops_kernels.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f")
// GCC 12's AVX-512 intrinsics start from a self-initialized "undefined" vector that -Wall reports as
// uninitialized wherever they are inlined (GCC bug 105593, fixed in GCC 13); the warning is false here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

namespace infertune::ops_x86 {
namespace {

// exp as in kernels/ops/avx2/vec_math_avx2.h (same reduction and polynomial); the 2^n factor is applied by
// VSCALEFPS, which overflows to +inf and rounds through the subnormals to 0 by itself.
__m512 exp_avx512(__m512 x) {
  x = _mm512_min_ps(_mm512_set1_ps(89.0f), _mm512_max_ps(_mm512_set1_ps(-110.0f), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// Lanes [0, count) of a 16-lane mask, count <= 16.
__mmask16 tail_mask(size_t count) { return static_cast<__mmask16>((1u << count) - 1); }

void rms_norm_avx512(const float* x, const float* gain, float eps, size_t n, float* out) {
  // Squares summed in double (exact products, as the reference); the tail's masked lanes load 0.
  __m512d acc0 = _mm512_setzero_pd(), acc1 = _mm512_setzero_pd();
  for (size_t i = 0; i < n; i += 16) {
    const __m512 v = _mm512_maskz_loadu_ps(n - i >= 16 ? 0xFFFF : tail_mask(n - i), x + i);
    const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
    const __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    acc0 = _mm512_fmadd_pd(lo, lo, acc0);
    acc1 = _mm512_fmadd_pd(hi, hi, acc1);
  }
  const double sum_squares = _mm512_reduce_add_pd(_mm512_add_pd(acc0, acc1));
  const float mean = static_cast<float>(sum_squares / static_cast<double>(n));
  const __m512 s = _mm512_set1_ps(1.0f / std::sqrt(mean + eps));
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? 0xFFFF : tail_mask(n - i);
    const __m512 v =
        _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), s), _mm512_maskz_loadu_ps(m, gain + i));
    _mm512_mask_storeu_ps(out + i, m, v);
  }
}

void softmax_avx512(float* x, size_t n) {
  const float inf = std::numeric_limits<float>::infinity();
  __m512 vmax = _mm512_set1_ps(-inf);
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? 0xFFFF : tail_mask(n - i);
    vmax = _mm512_mask_max_ps(vmax, m, vmax, _mm512_maskz_loadu_ps(m, x + i));
  }
  const float max = _mm512_reduce_max_ps(vmax);
  if (max == -inf) {
    for (size_t i = 0; i < n; ++i) x[i] = 0;
    return;
  }
  // exp(x - max) stored back, summed in double like the reference; masked-off lanes stay 0.
  const __m512 vm = _mm512_set1_ps(max);
  __m512d sum0 = _mm512_setzero_pd(), sum1 = _mm512_setzero_pd();
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? 0xFFFF : tail_mask(n - i);
    const __m512 e = _mm512_maskz_mov_ps(m, exp_avx512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vm)));
    _mm512_mask_storeu_ps(x + i, m, e);
    sum0 = _mm512_add_pd(sum0, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
    sum1 = _mm512_add_pd(sum1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
  }
  const __m512 inverse = _mm512_set1_ps(static_cast<float>(1.0 / _mm512_reduce_add_pd(_mm512_add_pd(sum0, sum1))));
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? 0xFFFF : tail_mask(n - i);
    _mm512_mask_storeu_ps(x + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), inverse));
  }
}

void silu_mul_avx512(const float* gate, const float* up, size_t n, float* out) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? 0xFFFF : tail_mask(n - i);
    const __m512 g = _mm512_maskz_loadu_ps(m, gate + i);
    const __m512 e = exp_avx512(_mm512_sub_ps(_mm512_setzero_ps(), g));
    const __m512 v = _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(one, e)), _mm512_maskz_loadu_ps(m, up + i));
    _mm512_mask_storeu_ps(out + i, m, v);
  }
}

// gelu_mul_avx2's method 16 at a time (the entries narrowed back to halves by vpmovdw).
void gelu_mul_avx512(const float* gate, const float* up, size_t n, float* out) {
  const int* table = reinterpret_cast<const int*>(gelu_f16_table());
  const __m512 low = _mm512_set1_ps(kGeluTableLow);
  const __m512 high = _mm512_set1_ps(kGeluTableHigh);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_loadu_ps(gate + i);
    const __m512i index = _mm512_cvtepu16_epi32(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    const __m512i entries = _mm512_i32gather_epi32(index, table, 2);
    __m512 g = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(entries));  // keeps each entry's low half
    g = _mm512_mask_mov_ps(g, _mm512_cmp_ps_mask(x, high, _CMP_GE_OQ), x);
    g = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, low, _CMP_GT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), g);
    _mm512_storeu_ps(out + i, _mm512_mul_ps(g, _mm512_loadu_ps(up + i)));
  }
  gelu_mul_reference(gate + i, up + i, n - i, out + i);
}

void add_avx512(float* x, const float* y, size_t n) {
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? 0xFFFF : tail_mask(n - i);
    _mm512_mask_storeu_ps(x + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i)));
  }
}

}  // namespace
}  // namespace infertune::ops_x86
#pragma GCC diagnostic pop
#pragma GCC pop_options

namespace infertune {
namespace {

bool avx512_available() {
  const CpuFeatures& f = cpu_features();
  return f.avx512f && f.avx2 && f.fma && f.f16c;
}

}  // namespace

const OpsKernels& avx512_ops_kernels() {
  static const OpsKernels table{"avx512",
                                ops_x86::rms_norm_avx512,
                                avx2_ops_kernels().rope_rotate,
                                ops_x86::softmax_avx512,
                                ops_x86::silu_mul_avx512,
                                ops_x86::add_avx512,
                                ops_x86::gelu_mul_avx512,
                                avx2_dequant_row};
  return table;
}

OpsVariant avx512_ops_variant() { return {"avx512", 20, avx512_available, avx512_ops_kernels}; }

}  // namespace infertune
