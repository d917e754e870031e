// AVX2 + F16C conversions of the oneDNN backend. The standard and project headers come before the target
// pragma so that only the functions below are compiled for AVX2 (see kernels/matmul/avx2/matmul_avx2.cpp).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/matmul/matmul.h"
#include "kernels/onednn/onednn_convert.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "kernels/matmul/avx2/x86_float_kernels.h"

namespace infertune {
namespace {

// 8 floats rounded to bf16 (low halves zero) -> their 8 upper halves, in order.
inline __m128i bf16_halves(__m256 rounded) {
  const __m256i upper = _mm256_srli_epi32(_mm256_castps_si256(rounded), 16);
  return _mm_packus_epi32(_mm256_castsi256_si128(upper), _mm256_extracti128_si256(upper, 1));
}

}  // namespace

void round_to_bf16_bits(const float* x, size_t n, uint16_t* out) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), bf16_halves(x86::round_to_bf16(_mm256_loadu_ps(x + i))));
  }
  if (i == n) return;
  float tail[8] = {};
  uint16_t halves[8];
  std::memcpy(tail, x + i, (n - i) * sizeof(float));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(halves), bf16_halves(x86::round_to_bf16(_mm256_loadu_ps(tail))));
  std::memcpy(out + i, halves, (n - i) * sizeof(uint16_t));
}

void round_to_f16_values(const float* x, size_t n, float* out) { x86::round_values<x86::round_to_f16>(x, n, out); }

void widen_f16(const uint8_t* w, size_t n, float* out) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, x86::load_f16x8(w + 2 * i));
  for (; i < n; ++i) out[i] = x86::half_at(w + 2 * i);
}

}  // namespace infertune
#pragma GCC pop_options

namespace infertune {

bool onednn_conversions_available() {
  const CpuFeatures& f = cpu_features();
  return f.avx2 && f.fma && f.f16c;
}

}  // namespace infertune
