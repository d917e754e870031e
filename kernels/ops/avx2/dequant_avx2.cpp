// AVX2 decoders of the row types embedding tables come in. Each reproduces the reference codec's floats bit
// for bit: the same products and differences in the same order, each rounded once (this directory is built
// with -ffp-contract=off, so mul-then-sub is never fused). Blocks are read through byte pointers with
// unaligned loads; the per-block scales are decoded with the scalar helpers of the reference.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/half.h"
#include "kernels/ops/avx2/ops_avx2.h"
#include "kernels/quant/blocks_basic.h"
#include "kernels/quant/blocks_k.h"
#include "kernels/quant/kquant_search.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include <immintrin.h>

namespace infertune::ops_x86 {
namespace {

float load_f16(const std::byte* p) {
  f16_t h;
  std::memcpy(&h.bits, p, 2);
  return f16_to_f32(h);
}

// 8 int8 codes -> floats.
__m256 i8x8_to_ps(__m128i q) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)); }

// y[0..16) = codes[0..16) * s_lo, y[16..32) = codes[16..32) * s_hi; codes: 32 int8.
void store_scaled_i8x32(__m256i codes, float s_lo, float s_hi, float* y) {
  const __m128i lo = _mm256_castsi256_si128(codes), hi = _mm256_extracti128_si256(codes, 1);
  const __m256 a = _mm256_set1_ps(s_lo), b = _mm256_set1_ps(s_hi);
  _mm256_storeu_ps(y + 0, _mm256_mul_ps(i8x8_to_ps(lo), a));
  _mm256_storeu_ps(y + 8, _mm256_mul_ps(i8x8_to_ps(_mm_srli_si128(lo, 8)), a));
  _mm256_storeu_ps(y + 16, _mm256_mul_ps(i8x8_to_ps(hi), b));
  _mm256_storeu_ps(y + 24, _mm256_mul_ps(i8x8_to_ps(_mm_srli_si128(hi, 8)), b));
}

// y[0..32) = d * codes - m; codes: 32 uint8 < 16.
void store_scaled_min_u8x32(__m256i codes, float d, float m, float* y) {
  const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
  const __m128i lo = _mm256_castsi256_si128(codes), hi = _mm256_extracti128_si256(codes, 1);
  const __m128i parts[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
  for (int k = 0; k < 4; ++k) {
    const __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(parts[k]));
    _mm256_storeu_ps(y + 8 * k, _mm256_sub_ps(_mm256_mul_ps(vd, q), vm));
  }
}

void dequant_f16(const std::byte* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i))));
  }
  for (; i < n; ++i) dst[i] = load_f16(src + 2 * i);
}

void dequant_bf16(const std::byte* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i)));
    _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(h, 16)));
  }
  for (; i < n; ++i) {
    uint16_t bits;
    std::memcpy(&bits, src + 2 * i, 2);
    const uint32_t f = uint32_t{bits} << 16;
    std::memcpy(dst + i, &f, 4);
  }
}

void dequant_f32(const std::byte* src, float* dst, size_t n) {
  if (n > 0) std::memcpy(dst, src, n * sizeof(float));
}

// Q8_0: value = q * d.
void dequant_q8_0(const std::byte* src, float* dst, size_t n) {
  constexpr size_t kBytes = sizeof(basic_quant::BlockQ8_0);
  for (size_t b = 0; b < n / 32; ++b) {
    const std::byte* block = src + b * kBytes;
    const float d = load_f16(block);
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
    store_scaled_i8x32(q, d, d, dst + 32 * b);
  }
}

// Q4_0: value j = (nibble j - 8) * d, values 0-15 in the low nibbles, 16-31 in the high ones.
void dequant_q4_0(const std::byte* src, float* dst, size_t n) {
  constexpr size_t kBytes = sizeof(basic_quant::BlockQ4_0);
  const __m128i low4 = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  for (size_t b = 0; b < n / 32; ++b) {
    const std::byte* block = src + b * kBytes;
    const float d = load_f16(block);
    const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2));
    const __m128i lo = _mm_sub_epi8(_mm_and_si128(qs, low4), eight);
    const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(qs, 4), low4), eight);
    store_scaled_i8x32(_mm256_set_m128i(hi, lo), d, d, dst + 32 * b);
  }
}

// Q4_K: per 64-value chunk, values 0-31 = d1 * low nibble - m1, 32-63 = d2 * high nibble - m2.
void dequant_q4_K(const std::byte* src, float* dst, size_t n) {
  using kquant::BlockQ4K;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (size_t b = 0; b < n / kquant::kSuperBlock; ++b) {
    const std::byte* block = src + b * sizeof(BlockQ4K);
    const float d = load_f16(block + offsetof(BlockQ4K, d));
    const float dmin = load_f16(block + offsetof(BlockQ4K, dmin));
    uint8_t scales[12];
    std::memcpy(scales, block + offsetof(BlockQ4K, scales), sizeof(scales));
    const std::byte* qs = block + offsetof(BlockQ4K, qs);
    float* y = dst + b * kquant::kSuperBlock;
    for (int chunk = 0; chunk < 4; ++chunk) {
      const auto [d1, m1, d2, m2] = kquant::chunk_scale_min(d, dmin, scales, chunk);
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * chunk));
      store_scaled_min_u8x32(_mm256_and_si256(q, low4), d1, m1, y);
      store_scaled_min_u8x32(_mm256_and_si256(_mm256_srli_epi16(q, 4), low4), d2, m2, y + 32);
      y += 64;
    }
  }
}

// Q6_K: per 128-value half, 4 runs of 32 values. Run r takes its low 4 bits from the low (r < 2) or high
// (r >= 2) nibbles of ql[32 * (r % 2) ...], its top 2 bits from bits 2r, 2r+1 of qh[0..32); the code minus 32
// is multiplied by (d * scale) of its 16-value group.
void dequant_q6_K(const std::byte* src, float* dst, size_t n) {
  using kquant::BlockQ6K;
  const __m256i low4 = _mm256_set1_epi8(0x0F), low2 = _mm256_set1_epi8(3), bias = _mm256_set1_epi8(32);
  for (size_t b = 0; b < n / kquant::kSuperBlock; ++b) {
    const std::byte* block = src + b * sizeof(BlockQ6K);
    const float d = load_f16(block + offsetof(BlockQ6K, d));
    int8_t scales[16];
    std::memcpy(scales, block + offsetof(BlockQ6K, scales), sizeof(scales));
    float* y = dst + b * kquant::kSuperBlock;
    for (int half = 0; half < 2; ++half) {
      const std::byte* ql = block + offsetof(BlockQ6K, ql) + 64 * half;
      const std::byte* qh = block + offsetof(BlockQ6K, qh) + 32 * half;
      const int8_t* sc = scales + 8 * half;
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
      // Low nibbles / high nibbles of ql, in the reference's order q1..q4 = l0 lo, l1 lo, l0 hi, l1 hi.
      const __m256i lows[4] = {_mm256_and_si256(l0, low4), _mm256_and_si256(l1, low4),
                               _mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                               _mm256_and_si256(_mm256_srli_epi16(l1, 4), low4)};
      for (int r = 0; r < 4; ++r) {
        // Masked to 2 bits before the 16-bit shift, so no bit crosses into the neighbouring byte.
        const __m256i high = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2 * r), low2), 4);
        const __m256i q = _mm256_sub_epi8(_mm256_or_si256(lows[r], high), bias);
        store_scaled_i8x32(q, d * sc[2 * r], d * sc[2 * r + 1], y + 32 * r);
      }
      y += 128;
    }
  }
}

}  // namespace
}  // namespace infertune::ops_x86
#pragma GCC pop_options

namespace infertune {

DequantRowFn avx2_dequant_row(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
      return ops_x86::dequant_f32;
    case GgmlType::F16:
      return ops_x86::dequant_f16;
    case GgmlType::BF16:
      return ops_x86::dequant_bf16;
    case GgmlType::Q8_0:
      return ops_x86::dequant_q8_0;
    case GgmlType::Q4_0:
      return ops_x86::dequant_q4_0;
    case GgmlType::Q4_K:
      return ops_x86::dequant_q4_K;
    case GgmlType::Q6_K:
      return ops_x86::dequant_q6_K;
    default:
      return nullptr;
  }
}

}  // namespace infertune
