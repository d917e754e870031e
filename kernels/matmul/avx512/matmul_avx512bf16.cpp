// VDPBF16PS for BF16 weights: its own translation unit because avx512-bf16 is not part of the avx512vnni
// variant's ISA (a VNNI CPU may lack it); the variant picks this kernel at start-up where the CPU has it.
// Built like kernels/matmul/avx2/matmul_avx2.cpp (headers before the target pragma).
//
// Numerics against the widening kernel (bf16 shifted to f32, one FMA per value): the activations are the
// same bf16 values (rounded here exactly as round_to_bf16 does, not by VCVTNEPS2BF16, which treats subnormal
// inputs as zero), and every product of two bf16 values is exact in f32. VDPBF16PS adds a lane's two
// products to its accumulator one after the other, each add rounded to nearest even, so only the order of
// the f32 sums differs (within the float-summation tolerance of the tests) — and, as the instruction
// defines, subnormal bf16 inputs and subnormal results count as zero (|values| < 2^-126, which no model
// activation or weight of use comes near). This is the order of ggml's AVX512-BF16 sgemm (tinyBLAS with
// KN = 32).
#include "kernels/matmul/avx512/matmul_avx512bf16.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/matmul/matmul.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512bf16")
// GCC 12 warns about the _mm512_undefined_*() inside its own conversion and extract intrinsics (false
// positives, as in matmul_avx512vnni.cpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/matmul/avx512/x86_float_kernels_512.h"

namespace infertune::x86 {
namespace {

// 16 floats -> their bf16 codes, bit for bit as round_to_bf16: nearest even on the upper 16 bits, a NaN
// kept NaN (quiet bit set).
inline __m256i bf16_codes(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb));
  const __mmask16 is_nan =
      _mm512_cmpgt_epi32_mask(_mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
  const __m512i chosen = _mm512_mask_or_epi32(rounded, is_nan, bits, _mm512_set1_epi32(0x00400000));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(chosen, 16));
}

// The problem's activations as bf16 codes, [n_tokens][n_cols], in a buffer owned by the calling thread
// (valid until its next call), made once per call for all of its rows.
inline const uint16_t* paired_bf16_codes(const MatmulProblem& p) {
  thread_local std::vector<uint16_t> codes;
  const size_t n = p.n_tokens * p.n_cols;
  if (codes.size() < n) codes.resize(n);
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = first_lanes16(n - i);
    _mm256_mask_storeu_epi16(codes.data() + i, m, bf16_codes(_mm512_maskz_loadu_ps(m, p.x + i)));
  }
  return codes.data();
}

// BF16 rows against bf16 activations, 32 values (16 lanes of pairs) per step.
struct Bf16DotRow {
  using Act = uint16_t;
  using W = __m512i;
  using X = __m512i;
  static constexpr size_t kStep = 32;
  static W weights(const uint8_t* row, size_t i, __mmask32 m) { return _mm512_maskz_loadu_epi16(m, row + 2 * i); }
  static X acts(const uint16_t* x, size_t i, __mmask32 m) { return _mm512_maskz_loadu_epi16(m, x + i); }
  static __m512 fma(__m512 acc, W w, X x) { return _mm512_dpbf16_ps(acc, (__m512bh)w, (__m512bh)x); }
  static const uint16_t* paired(const MatmulProblem& p) { return paired_bf16_codes(p); }
};

}  // namespace
}  // namespace infertune::x86
#pragma GCC diagnostic pop
#pragma GCC pop_options

namespace infertune {

MatmulFn avx512bf16_dot_kernel() {
  const CpuFeatures& f = cpu_features();
  if (!(f.avx2 && f.fma && f.f16c && f.avx512f && f.avx512bw && f.avx512vl && f.avx512_bf16)) return nullptr;
  return x86::matmul_float_act_512<x86::Bf16DotRow>;
}

}  // namespace infertune
