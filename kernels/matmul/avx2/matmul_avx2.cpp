// The "avx2" variant. Every header that the kernels use is included before the target pragma, so only the
// kernels below it are compiled for AVX2 (inline library code stays baseline x86-64 and cannot leak AVX2
// instructions into the rest of the binary).
#include "kernels/matmul/avx2/matmul_avx2.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/matmul/activation_quant.h"
#include "kernels/matmul/decode_buffer.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/quantized_activations.h"
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/blocks_k.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "kernels/matmul/avx2/x86_dot_kernels.h"

namespace infertune::x86 {
namespace {

// The tiled kernels' vectors: 8 tokens per ymm, a tile of 4 rows x 8 tokens (16 registers hold its
// accumulators and sub-block sums).
struct Avx2Tile {
  using I = __m256i;
  using F = __m256;
  static constexpr int kLanes = 8, kRows = 4, kVecs = 1;
  static I zero() { return _mm256_setzero_si256(); }
  static I load(const int8_t* p) { return load256(p); }
  static I bcast(const uint8_t* p) { return _mm256_set1_epi32(static_cast<int>(u32_at(p))); }
  static I dot(I acc, I u, I s) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
  }
  static I mul_add(I acc, I a, int32_t k) { return _mm256_add_epi32(acc, _mm256_mullo_epi32(a, _mm256_set1_epi32(k))); }
  static I madd_acc(I acc, I a, I b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
  static I set1(int32_t v) { return _mm256_set1_epi32(v); }
  static F zerof() { return _mm256_setzero_ps(); }
  static F loadf(const float* p) { return _mm256_loadu_ps(p); }
  static F set1f(float v) { return _mm256_set1_ps(v); }
  static F cvt(I v) { return _mm256_cvtepi32_ps(v); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static void storef(float* p, F v) { _mm256_storeu_ps(p, v); }
  static I abs8(I v) { return _mm256_sign_epi8(v, v); }
  static I sign8(I x, I w) { return _mm256_sign_epi8(x, w); }
};

// maddubs pair sums (int16), widened to int32 by madd with ones or with the scales. maddubs saturates, so
// unsigned codes must stay small (kWideUnsigned false: Q8_0 and the IQ4 codebooks keep signed codes).
struct Avx2Isa {
  static constexpr bool kWideUnsigned = false;
  // Matrix-vector groups of 8 rows (measured faster than 4 here, spills and all).
  static constexpr int kMatvecRows = 8;
  using Tile = Avx2Tile;
  static __m256i bit_bytes(uint32_t bits, __m256i v) { return _mm256_and_si256(bytes_from_bits(bits), v); }
  static __m256i dot(__m256i acc, __m256i u, __m256i s) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
  }
  static __m256i dot_scaled(__m256i acc, __m256i u, __m256i s, __m256i scale16) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), scale16));
  }
};

}  // namespace
}  // namespace infertune::x86
#pragma GCC pop_options

namespace infertune {
namespace {

std::vector<MatmulKernel> avx2_kernels() {
  std::vector<MatmulKernel> kernels;
  for (const auto& k : x86::kIsaKernels<x86::Avx2Isa>) kernels.push_back({k.type, "avx2", k.fn, k.reads_interleaved});
  return kernels;
}

bool avx2_available() {
  const CpuFeatures& f = cpu_features();
  return f.avx2 && f.fma && f.f16c;
}

}  // namespace

MatmulVariant avx2_matmul_variant() { return {"avx2", 10, avx2_available, avx2_kernels}; }

}  // namespace infertune
