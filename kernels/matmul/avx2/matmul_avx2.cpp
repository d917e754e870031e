// The "avx2" variant. Every header that the kernels use is included before the target pragma, so only the
// kernels below it are compiled for AVX2 (inline library code stays baseline x86-64 and cannot leak AVX2
// instructions into the rest of the binary).
#include "kernels/matmul/avx2/matmul_avx2.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/matmul/activation_quant.h"
#include "kernels/matmul/matmul.h"
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/blocks_k.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "kernels/matmul/avx2/x86_dot_kernels.h"

namespace infertune::x86 {
namespace {

// maddubs pair sums (int16), widened to int32 by madd with ones or with the scales.
struct Avx2Isa {
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
  for (const auto& k : x86::kIsaKernels<x86::Avx2Isa>) kernels.push_back({k.type, "avx2", k.fn});
  return kernels;
}

bool avx2_available() {
  const CpuFeatures& f = cpu_features();
  return f.avx2 && f.fma && f.f16c;
}

}  // namespace

MatmulVariant avx2_matmul_variant() { return {"avx2", 10, avx2_available, avx2_kernels}; }

}  // namespace infertune
