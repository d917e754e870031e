// The "avxvnni" variant; built like kernels/matmul/avx2/matmul_avx2.cpp (headers before the target
// pragma), with AVX-VNNI multiply-adds as the Isa policy. The float weight types run avx2's kernels.
#include "kernels/matmul/avxvnni/matmul_avxvnni.h"

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
#pragma GCC target("avx2,fma,f16c,avxvnni")
#include "kernels/matmul/avx2/x86_dot_kernels.h"

namespace infertune::x86 {
namespace {

// The tiled kernels' vectors as in the avx2 variant (8 tokens per ymm, 4 rows x 8 tokens), with the byte
// and word multiply-adds in one instruction each.
struct AvxVnniTile {
  using I = __m256i;
  using F = __m256;
  static constexpr int kLanes = 8, kRows = 4, kVecs = 1;
  static I zero() { return _mm256_setzero_si256(); }
  static I load(const int8_t* p) { return load256(p); }
  static I bcast(const uint8_t* p) { return _mm256_set1_epi32(static_cast<int>(u32_at(p))); }
  static I dot(I acc, I u, I s) { return _mm256_dpbusd_avx_epi32(acc, u, s); }
  static I mul_add(I acc, I a, int32_t k) { return _mm256_add_epi32(acc, _mm256_mullo_epi32(a, _mm256_set1_epi32(k))); }
  static I madd_acc(I acc, I a, I b) { return _mm256_dpwssd_avx_epi32(acc, a, b); }
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

// VPDPBUSD sums u8 * s8 products in int32 without saturating (as the AVX-512 one does), so codes may use
// all 8 bits unsigned. Without AVX512-BW there is no byte mask register: bit_bytes is avx2's.
struct AvxVnniIsa {
  static constexpr bool kWideUnsigned = true;
  static constexpr int kMatvecRows = 8;
  using Tile = AvxVnniTile;
  static __m256i bit_bytes(uint32_t bits, __m256i v) { return _mm256_and_si256(bytes_from_bits(bits), v); }
  static __m256i dot(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_avx_epi32(acc, u, s); }
  // maddubs pair sums (int16) times the int16 scales, accumulated by VPDPWSSD.
  static __m256i dot_scaled(__m256i acc, __m256i u, __m256i s, __m256i scale16) {
    return _mm256_dpwssd_avx_epi32(acc, _mm256_maddubs_epi16(u, s), scale16);
  }
};

}  // namespace
}  // namespace infertune::x86
#pragma GCC pop_options

namespace infertune {
namespace {

std::vector<MatmulKernel> avxvnni_kernels() {
  std::vector<MatmulKernel> kernels;
  for (const auto& k : x86::kIsaKernels<x86::AvxVnniIsa>)
    kernels.push_back({k.type, "avxvnni", k.fn, k.reads_interleaved});
  return kernels;
}

bool avxvnni_available() {
  const CpuFeatures& f = cpu_features();
  return f.avx2 && f.fma && f.f16c && f.avx_vnni;
}

}  // namespace

MatmulVariant avxvnni_matmul_variant() { return {"avxvnni", 15, avxvnni_available, avxvnni_kernels}; }

}  // namespace infertune
