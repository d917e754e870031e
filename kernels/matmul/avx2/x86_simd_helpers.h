#pragma once
// Small vector helpers shared by the x86 matmul kernels. Like x86_dot_kernels.h, included ONLY after an ISA
// unit's `#pragma GCC target`; the anonymous namespace gives each unit its own copies.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/matmul/matmul.h"

namespace infertune::x86 {
namespace {

// ---- small helpers ----------------------------------------------------------------------------------

inline float half_at(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return _cvtsh_ss(bits);
}

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// 16 bytes of nibbles -> 32 codes: byte j (< 16) the low nibble of qs[j], byte 16 + j its high nibble
// (the 32-value formats' nibble order).
inline __m256i unpack_nibbles(const uint8_t* qs) {
  const __m128i raw = load128(qs);
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), _mm256_set1_epi8(0x0F));
}

// Bit j of `bits` -> byte j = 0xFF when set, 0 when clear (j < 32).
inline __m256i bytes_from_bits(uint32_t bits) {
  // Byte j takes byte j / 8 of bits, then everything but bit j % 8 is forced on.
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
  const __m256i others = _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe);
  return _mm256_cmpeq_epi8(_mm256_or_si256(spread, others), _mm256_set1_epi64x(-1));
}

inline uint32_t u32_at(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The 4 bytes at p in every 32-bit lane.
inline __m256i broadcast_u32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(static_cast<int>(v));
}

// Signed weights w times signed activations x, 4-product sums in int32 lanes (sign trick: |w| * sign(x, w)).
template <class Isa>
inline __m256i dot_signed(__m256i acc, __m256i w, __m256i x) {
  return Isa::dot(acc, _mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
}

// The weight bytes of a problem, for kernels that read fields at byte offsets.
inline const uint8_t* weight_bytes(const MatmulProblem& p) {
  return reinterpret_cast<const uint8_t*>(p.weights.data());
}

}  // namespace
}  // namespace infertune::x86
