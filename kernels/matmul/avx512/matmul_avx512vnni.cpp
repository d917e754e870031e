// The "avx512vnni" variant; built like kernels/matmul/avx2/matmul_avx2.cpp (headers before the target
// pragma), with VNNI multiply-adds as the Isa policy.
#include "kernels/matmul/avx512/matmul_avx512vnni.h"

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
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")
#include "kernels/matmul/avx2/x86_dot_kernels.h"

namespace infertune::x86 {
namespace {

struct VnniIsa {
  static __m256i dot(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_epi32(acc, u, s); }
  // maddubs pair sums (int16) times the int16 scales, accumulated by VPDPWSSD.
  static __m256i dot_scaled(__m256i acc, __m256i u, __m256i s, __m256i scale16) {
    return _mm256_dpwssd_epi32(acc, _mm256_maddubs_epi16(u, s), scale16);
  }
};

}  // namespace
}  // namespace infertune::x86
#pragma GCC pop_options

namespace infertune {
namespace {

std::vector<MatmulKernel> avx512vnni_kernels() {
  std::vector<MatmulKernel> kernels;
  for (const auto& k : x86::kIsaKernels<x86::VnniIsa>) kernels.push_back({k.type, "avx512vnni", k.fn});
  return kernels;
}

bool avx512vnni_available() {
  const CpuFeatures& f = cpu_features();
  return f.avx2 && f.fma && f.f16c && f.avx512f && f.avx512bw && f.avx512vl && f.avx512_vnni;
}

}  // namespace

MatmulVariant avx512vnni_matmul_variant() { return {"avx512vnni", 20, avx512vnni_available, avx512vnni_kernels}; }

}  // namespace infertune
