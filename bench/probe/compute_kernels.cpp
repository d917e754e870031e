#include "bench/probe/compute_kernels.h"

#include <immintrin.h>

#include <initializer_list>

#include "kernels/cpu_features.h"

namespace infertune {
namespace {

constexpr unsigned kFmaChains = 12;   // >= FMA latency (4) x FMA ports (2), with room for wider cores
constexpr unsigned kVnniChains = 10;  // >= vpdpbusd latency (5) x two per cycle on recent cores
constexpr unsigned kMaddChains = 4;   // the AVX2 dot's chain is a 1-cycle add; its multiplies are independent
constexpr unsigned kScalarDotChains = 2;

float chain_start(unsigned k) { return 1.0f + static_cast<float>(k) / 16.0f; }

double fma_scalar(uint64_t steps, float a, float b) {
  float v[8];
  for (unsigned k = 0; k < 8; ++k) v[k] = chain_start(k);
  for (uint64_t s = 0; s < steps; ++s) {
    for (unsigned k = 0; k < 8; ++k) v[k] = v[k] * a + b;
  }
  double sum = 0;
  for (float x : v) sum += x;
  return sum;
}

__attribute__((target("avx2,fma"))) double fma_avx2(uint64_t steps, float a, float b) {
  __m256 v[kFmaChains];
  for (unsigned k = 0; k < kFmaChains; ++k) v[k] = _mm256_set1_ps(chain_start(k));
  const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
  for (uint64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 12
    for (unsigned k = 0; k < kFmaChains; ++k) v[k] = _mm256_fmadd_ps(v[k], va, vb);
  }
  double sum = 0;
  alignas(32) float lanes[8];
  for (unsigned k = 0; k < kFmaChains; ++k) {
    _mm256_store_ps(lanes, v[k]);
    for (float x : lanes) sum += x;
  }
  return sum;
}

__attribute__((target("avx512f"))) double fma_avx512(uint64_t steps, float a, float b) {
  __m512 v[kFmaChains];
  for (unsigned k = 0; k < kFmaChains; ++k) v[k] = _mm512_set1_ps(chain_start(k));
  const __m512 va = _mm512_set1_ps(a), vb = _mm512_set1_ps(b);
  for (uint64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 12
    for (unsigned k = 0; k < kFmaChains; ++k) v[k] = _mm512_fmadd_ps(v[k], va, vb);
  }
  double sum = 0;
  alignas(64) float lanes[16];
  for (unsigned k = 0; k < kFmaChains; ++k) {
    _mm512_store_ps(lanes, v[k]);
    for (float x : lanes) sum += x;
  }
  return sum;
}

// The int8 loops pass their multiplicand through an empty asm every step: the optimiser must then assume
// it changed, so the per-step products cannot be hoisted out of the loop (it costs no instruction).

// Packs the u8 and s8 operands into the 32-bit pattern every lane repeats.
uint32_t repeat_byte(uint8_t byte) { return 0x01010101u * byte; }

// Two one-lane chains; every product has its own opaque operand and result, so none is shared, hoisted
// or factored out.
double int8_scalar(uint64_t steps, uint8_t ua, int8_t sb) {
  static_assert(kScalarDotChains == 2);
  uint32_t v0 = 0, v1 = 1;
  uint32_t a0 = ua, a1 = ua, a2 = ua, a3 = ua, a4 = ua, a5 = ua, a6 = ua, a7 = ua;
  const auto b = static_cast<uint32_t>(static_cast<int32_t>(sb));  // s32 products, wrapped in u32
  for (uint64_t s = 0; s < steps; ++s) {
    asm volatile("" : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3), "+r"(a4), "+r"(a5), "+r"(a6), "+r"(a7));
    uint32_t p0 = a0 * b, p1 = a1 * b, p2 = a2 * b, p3 = a3 * b, p4 = a4 * b, p5 = a5 * b, p6 = a6 * b, p7 = a7 * b;
    asm volatile("" : "+r"(p0), "+r"(p1), "+r"(p2), "+r"(p3), "+r"(p4), "+r"(p5), "+r"(p6), "+r"(p7));  // no (a0+a1)*b
    v0 += p0 + p1 + p2 + p3;
    v1 += p4 + p5 + p6 + p7;
  }
  return double(static_cast<int32_t>(v0)) + double(static_cast<int32_t>(v1));
}

template <unsigned kLanes>
double sum_s32_lanes(const int32_t* lanes) {
  double sum = 0;
  for (unsigned i = 0; i < kLanes; ++i) sum += lanes[i];
  return sum;
}

__attribute__((target("avx2"))) inline __m256i madd_step(__m256i acc, __m256i a, __m256i b, __m256i ones) {
  const __m256i pairs = _mm256_maddubs_epi16(a, b);              // s16: ua*sb + ua*sb
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));  // s32: four products
}

// Named variables rather than arrays: an asm operand on an array element keeps the array in memory.
__attribute__((target("avx2"))) double int8_avx2(uint64_t steps, uint8_t ua, int8_t sb) {
  static_assert(kMaddChains == 4);
  __m256i v0 = _mm256_set1_epi32(0), v1 = _mm256_set1_epi32(1), v2 = _mm256_set1_epi32(2), v3 = _mm256_set1_epi32(3);
  __m256i a0 = _mm256_set1_epi32(static_cast<int>(repeat_byte(ua))), a1 = a0, a2 = a0, a3 = a0;
  const __m256i b = _mm256_set1_epi32(static_cast<int>(repeat_byte(static_cast<uint8_t>(sb))));
  const __m256i ones = _mm256_set1_epi16(1);
  for (uint64_t s = 0; s < steps; ++s) {
    // Four opaque copies of the same operand, so the four chains cannot share one multiply.
    asm volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3));
    v0 = madd_step(v0, a0, b, ones);
    v1 = madd_step(v1, a1, b, ones);
    v2 = madd_step(v2, a2, b, ones);
    v3 = madd_step(v3, a3, b, ones);
  }
  alignas(32) int32_t lanes[8];
  double sum = 0;
  for (const __m256i& v : {v0, v1, v2, v3}) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
    sum += sum_s32_lanes<8>(lanes);
  }
  return sum;
}

// The VNNI loops name their ten accumulators: with an array GCC 12 copies every accumulator through
// another register each step, doubling the instructions the front end must issue.
__attribute__((target("avx2,avxvnni"))) double int8_avx_vnni(uint64_t steps, uint8_t ua, int8_t sb) {
  static_assert(kVnniChains == 10);
  __m256i v0 = _mm256_set1_epi32(0), v1 = _mm256_set1_epi32(1), v2 = _mm256_set1_epi32(2), v3 = _mm256_set1_epi32(3),
          v4 = _mm256_set1_epi32(4), v5 = _mm256_set1_epi32(5), v6 = _mm256_set1_epi32(6), v7 = _mm256_set1_epi32(7),
          v8 = _mm256_set1_epi32(8), v9 = _mm256_set1_epi32(9);
  __m256i a = _mm256_set1_epi32(static_cast<int>(repeat_byte(ua)));
  const __m256i b = _mm256_set1_epi32(static_cast<int>(repeat_byte(static_cast<uint8_t>(sb))));
  for (uint64_t s = 0; s < steps; ++s) {
    asm volatile("" : "+x"(a));
    v0 = _mm256_dpbusd_avx_epi32(v0, a, b);
    v1 = _mm256_dpbusd_avx_epi32(v1, a, b);
    v2 = _mm256_dpbusd_avx_epi32(v2, a, b);
    v3 = _mm256_dpbusd_avx_epi32(v3, a, b);
    v4 = _mm256_dpbusd_avx_epi32(v4, a, b);
    v5 = _mm256_dpbusd_avx_epi32(v5, a, b);
    v6 = _mm256_dpbusd_avx_epi32(v6, a, b);
    v7 = _mm256_dpbusd_avx_epi32(v7, a, b);
    v8 = _mm256_dpbusd_avx_epi32(v8, a, b);
    v9 = _mm256_dpbusd_avx_epi32(v9, a, b);
  }
  alignas(32) int32_t lanes[8];
  double sum = 0;
  for (const __m256i& v : {v0, v1, v2, v3, v4, v5, v6, v7, v8, v9}) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
    sum += sum_s32_lanes<8>(lanes);
  }
  return sum;
}

__attribute__((target("avx512f,avx512vnni"))) double int8_avx512_vnni(uint64_t steps, uint8_t ua, int8_t sb) {
  static_assert(kVnniChains == 10);
  __m512i v0 = _mm512_set1_epi32(0), v1 = _mm512_set1_epi32(1), v2 = _mm512_set1_epi32(2), v3 = _mm512_set1_epi32(3),
          v4 = _mm512_set1_epi32(4), v5 = _mm512_set1_epi32(5), v6 = _mm512_set1_epi32(6), v7 = _mm512_set1_epi32(7),
          v8 = _mm512_set1_epi32(8), v9 = _mm512_set1_epi32(9);
  __m512i a = _mm512_set1_epi32(static_cast<int>(repeat_byte(ua)));
  const __m512i b = _mm512_set1_epi32(static_cast<int>(repeat_byte(static_cast<uint8_t>(sb))));
  for (uint64_t s = 0; s < steps; ++s) {
    asm volatile("" : "+v"(a));
    v0 = _mm512_dpbusd_epi32(v0, a, b);
    v1 = _mm512_dpbusd_epi32(v1, a, b);
    v2 = _mm512_dpbusd_epi32(v2, a, b);
    v3 = _mm512_dpbusd_epi32(v3, a, b);
    v4 = _mm512_dpbusd_epi32(v4, a, b);
    v5 = _mm512_dpbusd_epi32(v5, a, b);
    v6 = _mm512_dpbusd_epi32(v6, a, b);
    v7 = _mm512_dpbusd_epi32(v7, a, b);
    v8 = _mm512_dpbusd_epi32(v8, a, b);
    v9 = _mm512_dpbusd_epi32(v9, a, b);
  }
  alignas(64) int32_t lanes[16];
  double sum = 0;
  for (const __m512i& v : {v0, v1, v2, v3, v4, v5, v6, v7, v8, v9}) {
    _mm512_store_si512(lanes, v);
    sum += sum_s32_lanes<16>(lanes);
  }
  return sum;
}

}  // namespace

std::vector<F32FmaKernel> available_f32_fma_kernels() {
  const CpuFeatures& cpu = cpu_features();
  std::vector<F32FmaKernel> kernels;
  if (cpu.avx512f) kernels.push_back({"avx512f", kFmaChains, 16, true, fma_avx512});
  if (cpu.avx2 && cpu.fma) kernels.push_back({"avx2+fma", kFmaChains, 8, true, fma_avx2});
  kernels.push_back({"scalar", 8, 1, false, fma_scalar});
  return kernels;
}

std::vector<Int8DotKernel> available_int8_dot_kernels() {
  const CpuFeatures& cpu = cpu_features();
  std::vector<Int8DotKernel> kernels;
  if (cpu.avx512_vnni) kernels.push_back({"avx512-vnni", kVnniChains, 16, int8_avx512_vnni});
  if (cpu.avx_vnni) kernels.push_back({"avx-vnni", kVnniChains, 8, int8_avx_vnni});
  if (cpu.avx2) kernels.push_back({"avx2", kMaddChains, 8, int8_avx2});
  kernels.push_back({"scalar", kScalarDotChains, 1, int8_scalar});
  return kernels;
}

}  // namespace infertune
