// The "avx2" attention variant (AVX2 + FMA + F16C). As in kernels/matmul/avx2/matmul_avx2.cpp, every
// library header is included before the target pragma, so only the kernels are compiled for AVX2.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/attention/attention.h"
#include "kernels/attention/attention_reference.h"
#include "kernels/attention/attention_variants.h"
#include "kernels/cpu_features.h"
#include "kernels/half.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "kernels/attention/attention_simd.h"

namespace infertune::attention_simd {
namespace {

struct Avx2 {
  using V = __m256;
  // Register budget of the blocked kernels: accumulators of the weighted sums, query heads per block.
  static constexpr int kAccumulators = 8;
  static constexpr int kMaxHeads = 2;
  static constexpr uint32_t kWidth = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static float hsum(V v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  // out[i] = the sum of the lanes of v_i.
  static void hsum4(V a, V b, V c, V d, float* out) {
    const __m256 ab = _mm256_hadd_ps(a, b);
    const __m256 cd = _mm256_hadd_ps(c, d);
    const __m256 abcd = _mm256_hadd_ps(ab, cd);  // per 128-bit half: sum a, sum b, sum c, sum d
    _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1)));
  }
  static V load_f16(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static V load_bf16(const uint16_t* p) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static V load_i8(const int8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  // exp(x) = 2^n exp(r), n = round(x / ln 2), r = x - n ln 2 (in two parts), exp(r) by Cephes' expf
  // polynomial; relative error about 2e-7. x is clamped to the range where 2^n is a normal float.
  static V exp(V x) {
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.33654f)), _mm256_set1_ps(88.37626f));
    const V n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    V r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    V y = _mm256_set1_ps(1.9875691500e-4f);
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
    y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(y, _mm256_castsi256_ps(bits));
  }
};

void avx2_standard(const AttentionProblem& p, AttentionScratch& s) { standard<Avx2>(p, s); }
void avx2_flash(const AttentionProblem& p, AttentionScratch& s) { flash<Avx2>(p, s); }

}  // namespace
}  // namespace infertune::attention_simd
#pragma GCC pop_options

namespace infertune {

AttentionVariant avx2_attention_variant() {
  const auto available = [] {
    const CpuFeatures& f = cpu_features();
    return f.avx2 && f.fma && f.f16c;
  };
  return {"avx2", 10, available, {"avx2", attention_simd::avx2_standard, attention_simd::avx2_flash}};
}

}  // namespace infertune
