#pragma once
// IEEE half (f16) and bfloat16 conversions, bit-exact with ggml's scalar conversions:
// f32 -> f16 and f32 -> bf16 round to nearest even; NaN stays NaN.
#include <bit>
#include <cstdint>

namespace infertune {

struct f16_t {
  uint16_t bits;
};
struct bf16_t {
  uint16_t bits;
};
static_assert(sizeof(f16_t) == 2 && sizeof(bf16_t) == 2);

inline float f16_to_f32(f16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  uint32_t exponent = (h.bits >> 10) & 0x1fu;
  uint32_t mantissa = h.bits & 0x3ffu;
  if (exponent == 0x1f) {
    // inf, or NaN with its payload; a NaN comes out quiet, as from F16C and ggml's scalar conversion.
    const uint32_t quiet = mantissa != 0 ? 0x00400000u : 0u;
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13) | quiet);
  }
  if (exponent == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);  // +-0
    // Subnormal half: normalize into a float exponent.
    exponent = 127 - 15 + 1;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    mantissa &= 0x3ffu;
    return std::bit_cast<float>(sign | (exponent << 23) | (mantissa << 13));
  }
  return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

inline f16_t f32_to_f16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return {static_cast<uint16_t>(sign | 0x7e00u)};  // NaN
  if (abs >= 0x47800000u) return {static_cast<uint16_t>(sign | 0x7c00u)};  // overflow -> inf (and inf)
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero): shift the implicit-one mantissa into place, rounding to nearest even.
    if (abs < 0x33000000u) return {sign};  // below half the smallest subnormal
    // value = mantissa * 2^(exponent - 150) and the half subnormal unit is 2^-24, so the half mantissa
    // is mantissa >> (126 - exponent), with 14..24 bits dropped.
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t drop = 126 - exponent;
    uint32_t q = mantissa >> drop;
    const uint32_t rem = mantissa & ((1u << drop) - 1);
    const uint32_t halfway = 1u << (drop - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;  // may round up into the smallest normal
    return {static_cast<uint16_t>(sign | q)};
  }
  // Normal: rebias the exponent and round the 13 dropped mantissa bits to nearest even.
  uint32_t h = ((abs >> 13) - ((127 - 15) << 10));
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: correct
  return {static_cast<uint16_t>(sign | h)};
}

inline float bf16_to_f32(bf16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b.bits) << 16); }

inline bf16_t f32_to_bf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return {static_cast<uint16_t>((x >> 16) | 64)};  // quiet NaN
  return {static_cast<uint16_t>((x + (0x7fffu + ((x >> 16) & 1u))) >> 16)};
}

}  // namespace infertune
