// The "avx2" ops variant. Every header the kernels use is included before the target pragma, so only the
// kernels below it are compiled for AVX2 (library code stays baseline x86-64).
#include "kernels/ops/avx2/ops_avx2.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/cpu_features.h"
#include "kernels/ops/gelu.h"
#include "kernels/ops/ops_kernels.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "kernels/ops/avx2/vec_math_avx2.h"

namespace infertune::ops_x86 {
namespace {

void rms_norm_avx2(const float* x, const float* gain, float eps, size_t n, float* out) {
  // Squares summed in double (exact products, as the reference), 4 accumulators against the add latency.
  __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(x + i);
    const __m256 b = _mm256_loadu_ps(x + i + 8);
    const __m256d a0 = _mm256_cvtps_pd(_mm256_castps256_ps128(a)), a1 = _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1));
    const __m256d b0 = _mm256_cvtps_pd(_mm256_castps256_ps128(b)), b1 = _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1));
    acc[0] = _mm256_fmadd_pd(a0, a0, acc[0]);
    acc[1] = _mm256_fmadd_pd(a1, a1, acc[1]);
    acc[2] = _mm256_fmadd_pd(b0, b0, acc[2]);
    acc[3] = _mm256_fmadd_pd(b1, b1, acc[3]);
  }
  double sum_squares = hsum_pd(_mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3])));
  for (; i < n; ++i) sum_squares += static_cast<double>(x[i]) * x[i];
  const float mean = static_cast<float>(sum_squares / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  // (x * scale) * gain, two roundings as the reference.
  const __m256 s = _mm256_set1_ps(scale);
  for (i = 0; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), s), _mm256_loadu_ps(gain + i)));
  }
  if (i < n) {
    const __m256i m = tail_mask_avx2(n - i);
    const __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_maskload_ps(x + i, m), s), _mm256_maskload_ps(gain + i, m));
    _mm256_maskstore_ps(out + i, m, v);
  }
}

// [c0 c1 c2 c3] -> [c0 c0 c1 c1 c2 c2 c3 c3]: one angle for both members of an interleaved pair.
__m256 duplicate_pairs(const float* p) {
  return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(p)), _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
}

void rope_rotate_avx2(float* head, const float* cos, const float* sin, size_t n_pairs, bool neox) {
  size_t i = 0;
  if (neox) {
    float* lo = head;
    float* hi = head + n_pairs;
    for (; i + 8 <= n_pairs; i += 8) {
      const __m256 x0 = _mm256_loadu_ps(lo + i), x1 = _mm256_loadu_ps(hi + i);
      const __m256 c = _mm256_loadu_ps(cos + i), s = _mm256_loadu_ps(sin + i);
      _mm256_storeu_ps(lo + i, _mm256_fmsub_ps(x0, c, _mm256_mul_ps(x1, s)));
      _mm256_storeu_ps(hi + i, _mm256_fmadd_ps(x0, s, _mm256_mul_ps(x1, c)));
    }
    if (i < n_pairs) {
      const __m256i m = tail_mask_avx2(n_pairs - i);
      const __m256 x0 = _mm256_maskload_ps(lo + i, m), x1 = _mm256_maskload_ps(hi + i, m);
      const __m256 c = _mm256_maskload_ps(cos + i, m), s = _mm256_maskload_ps(sin + i, m);
      _mm256_maskstore_ps(lo + i, m, _mm256_fmsub_ps(x0, c, _mm256_mul_ps(x1, s)));
      _mm256_maskstore_ps(hi + i, m, _mm256_fmadd_ps(x0, s, _mm256_mul_ps(x1, c)));
    }
    return;
  }
  // Interleaved: v = [x0 x1 ...], swapped = [x1 x0 ...]; fmaddsub gives x0 c - x1 s in even lanes and
  // x1 c + x0 s in odd lanes.
  for (; i + 4 <= n_pairs; i += 4) {
    const __m256 v = _mm256_loadu_ps(head + 2 * i);
    const __m256 swapped = _mm256_permute_ps(v, 0xB1);
    const __m256 c = duplicate_pairs(cos + i), s = duplicate_pairs(sin + i);
    _mm256_storeu_ps(head + 2 * i, _mm256_fmaddsub_ps(v, c, _mm256_mul_ps(swapped, s)));
  }
  for (; i < n_pairs; ++i) {
    const float x0 = head[2 * i], x1 = head[2 * i + 1];
    head[2 * i] = std::fma(x0, cos[i], -(x1 * sin[i]));
    head[2 * i + 1] = std::fma(x1, cos[i], x0 * sin[i]);
  }
}

void softmax_avx2(float* x, size_t n) {
  const float inf = std::numeric_limits<float>::infinity();
  __m256 vmax = _mm256_set1_ps(-inf);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(x + i));
  float max = hmax_ps(vmax);
  for (; i < n; ++i) max = std::fmax(max, x[i]);
  if (max == -inf) {
    for (i = 0; i < n; ++i) x[i] = 0;
    return;
  }
  // exp(x - max) stored back, summed in double like the reference.
  const __m256 m = _mm256_set1_ps(max);
  __m256d sum0 = _mm256_setzero_pd(), sum1 = _mm256_setzero_pd();
  for (i = 0; i + 8 <= n; i += 8) {
    const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));
    _mm256_storeu_ps(x + i, e);
    sum0 = _mm256_add_pd(sum0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
    sum1 = _mm256_add_pd(sum1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
  }
  if (i < n) {
    // Masked-off lanes load 0; their exp(0 - max) is zeroed before it reaches the sum.
    const __m256i mask = tail_mask_avx2(n - i);
    const __m256 e =
        _mm256_and_ps(exp_avx2(_mm256_sub_ps(_mm256_maskload_ps(x + i, mask), m)), _mm256_castsi256_ps(mask));
    _mm256_maskstore_ps(x + i, mask, e);
    sum0 = _mm256_add_pd(sum0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
    sum1 = _mm256_add_pd(sum1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
  }
  const __m256 inverse = _mm256_set1_ps(static_cast<float>(1.0 / hsum_pd(_mm256_add_pd(sum0, sum1))));
  for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inverse));
  for (; i < n; ++i) x[i] *= _mm256_cvtss_f32(inverse);
}

// silu(g) * u = g / (1 + exp(-g)) * u; exp(-g) = +inf for g < -88.7 gives -0 * u, the limit.
__m256 silu_mul8(__m256 g, __m256 u) {
  const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_setzero_ps(), g));
  return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
}

void silu_mul_avx2(const float* gate, const float* up, size_t n, float* out) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, silu_mul8(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  if (i < n) {
    const __m256i m = tail_mask_avx2(n - i);
    _mm256_maskstore_ps(out + i, m, silu_mul8(_mm256_maskload_ps(gate + i, m), _mm256_maskload_ps(up + i, m)));
  }
}

// gelu(g) * u through the half-precision table, 8 at a time: F16C rounds to nearest even as f32_to_f16 does, the
// table entries come in by one gather (4 bytes each, the high half masked off), and F16C widens them exactly; so
// every value is the reference's. The tail goes through the reference.
void gelu_mul_avx2(const float* gate, const float* up, size_t n, float* out) {
  const int* table = reinterpret_cast<const int*>(gelu_f16_table());
  const __m256 low = _mm256_set1_ps(kGeluTableLow);
  const __m256 high = _mm256_set1_ps(kGeluTableHigh);
  const __m256i low_half = _mm256_set1_epi32(0xFFFF);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(gate + i);
    const __m256i index = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    const __m256i entries = _mm256_and_si256(_mm256_i32gather_epi32(table, index, 2), low_half);
    const __m128i halves = _mm_packus_epi32(_mm256_castsi256_si128(entries), _mm256_extracti128_si256(entries, 1));
    __m256 g = _mm256_cvtph_ps(halves);
    g = _mm256_blendv_ps(g, x, _mm256_cmp_ps(x, high, _CMP_GE_OQ));
    g = _mm256_andnot_ps(_mm256_cmp_ps(x, low, _CMP_LE_OQ), g);
    _mm256_storeu_ps(out + i, _mm256_mul_ps(g, _mm256_loadu_ps(up + i)));
  }
  gelu_mul_reference(gate + i, up + i, n - i, out + i);
}

void add_avx2(float* x, const float* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_add_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  if (i < n) {
    const __m256i m = tail_mask_avx2(n - i);
    _mm256_maskstore_ps(x + i, m, _mm256_add_ps(_mm256_maskload_ps(x + i, m), _mm256_maskload_ps(y + i, m)));
  }
}

}  // namespace
}  // namespace infertune::ops_x86
#pragma GCC pop_options

namespace infertune {
namespace {

constexpr OpsKernels kAvx2{"avx2",
                           ops_x86::rms_norm_avx2,
                           ops_x86::rope_rotate_avx2,
                           ops_x86::softmax_avx2,
                           ops_x86::silu_mul_avx2,
                           ops_x86::add_avx2,
                           ops_x86::gelu_mul_avx2,
                           avx2_dequant_row};

bool avx2_available() {
  const CpuFeatures& f = cpu_features();
  return f.avx2 && f.fma && f.f16c;
}

}  // namespace

const OpsKernels& avx2_ops_kernels() { return kAvx2; }

OpsVariant avx2_ops_variant() { return {"avx2", 10, avx2_available, avx2_ops_kernels}; }

}  // namespace infertune
