// The "avx512vnni" variant; built like kernels/matmul/avx2/matmul_avx2.cpp (headers before the target
// pragma), with VNNI multiply-adds as the Isa policy, and the float weight types on 512-bit vectors
// (x86_float_kernels_512.h; BF16 with VDPBF16PS where the CPU has avx512-bf16, matmul_avx512bf16.cpp).
#include "kernels/matmul/avx512/matmul_avx512vnni.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/matmul/activation_quant.h"
#include "kernels/matmul/avx512/matmul_avx512bf16.h"
#include "kernels/matmul/decode_buffer.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/quantized_activations.h"
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/blocks_k.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")
// GCC 12 warns about the _mm512_undefined_*() inside its own _mm512_cvtepi32_ps and 512-bit extracts
// (false positives).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/matmul/avx2/x86_dot_kernels.h"
#include "kernels/matmul/avx512/x86_float_kernels_512.h"

namespace infertune::x86 {
namespace {

// The tiled kernels' vectors: 16 tokens per zmm (one activation panel), a tile of 4 rows x 32 tokens; the
// 32 zmm registers hold its 8 accumulators, 8 super-block and 8 sub-block sums.
struct Avx512Tile {
  using I = __m512i;
  using F = __m512;
  static constexpr int kLanes = 16, kRows = 4, kVecs = 2;
  static I zero() { return _mm512_setzero_si512(); }
  static I load(const int8_t* p) { return _mm512_loadu_si512(p); }
  static I bcast(const uint8_t* p) { return _mm512_set1_epi32(static_cast<int>(u32_at(p))); }
  static I dot(I acc, I u, I s) { return _mm512_dpbusd_epi32(acc, u, s); }
  static I mul_add(I acc, I a, int32_t k) { return _mm512_add_epi32(acc, _mm512_mullo_epi32(a, _mm512_set1_epi32(k))); }
  static I madd_acc(I acc, I a, I b) { return _mm512_dpwssd_epi32(acc, a, b); }
  static I set1(int32_t v) { return _mm512_set1_epi32(v); }
  static F zerof() { return _mm512_setzero_ps(); }
  static F loadf(const float* p) { return _mm512_loadu_ps(p); }
  static F set1f(float v) { return _mm512_set1_ps(v); }
  static F cvt(I v) { return _mm512_cvtepi32_ps(v); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static void storef(float* p, F v) { _mm512_storeu_ps(p, v); }
};

// VPDPBUSD sums u8 * s8 products in int32 without saturating, so codes may use all 8 bits unsigned.
struct VnniIsa {
  static constexpr bool kWideUnsigned = true;
  // Matrix-vector groups of 8 rows (32 registers).
  static constexpr int kMatvecRows = 8;
  using Tile = Avx512Tile;
  // A byte mask register does in one instruction what AVX2 needs a shuffle, an or and a compare for.
  static __m256i bit_bytes(uint32_t bits, __m256i v) { return _mm256_maskz_mov_epi8(bits, v); }
  static __m256i dot(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_epi32(acc, u, s); }
  // maddubs pair sums (int16) times the int16 scales, accumulated by VPDPWSSD.
  static __m256i dot_scaled(__m256i acc, __m256i u, __m256i s, __m256i scale16) {
    return _mm256_dpwssd_epi32(acc, _mm256_maddubs_epi16(u, s), scale16);
  }
};

}  // namespace
}  // namespace infertune::x86
#pragma GCC diagnostic pop
#pragma GCC pop_options

namespace infertune {
namespace {

// The integer types' kernels of the shared templates; the float types' on zmm instead of their ymm ones.
MatmulFn chosen_kernel(const x86::TypedKernel& k) {
  if (k.type == GgmlType::BF16) {
    if (MatmulFn dot = avx512bf16_dot_kernel()) return dot;
  }
  if (MatmulFn wide = x86::float_kernel_512(k.type)) return wide;
  return k.fn;
}

std::vector<MatmulKernel> avx512vnni_kernels() {
  std::vector<MatmulKernel> kernels;
  for (const auto& k : x86::kIsaKernels<x86::VnniIsa>)
    kernels.push_back({k.type, "avx512vnni", chosen_kernel(k), k.reads_interleaved});
  return kernels;
}

bool avx512vnni_available() {
  const CpuFeatures& f = cpu_features();
  return f.avx2 && f.fma && f.f16c && f.avx512f && f.avx512bw && f.avx512vl && f.avx512_vnni;
}

}  // namespace

MatmulVariant avx512vnni_matmul_variant() { return {"avx512vnni", 20, avx512vnni_available, avx512vnni_kernels}; }

MatmulFn avx512vnni_bf16_widening_kernel() { return x86::float_kernel_512(GgmlType::BF16); }

}  // namespace infertune
