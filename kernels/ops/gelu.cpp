#include "kernels/ops/gelu.h"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/half.h"

namespace infertune {
namespace {

constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
constexpr float kCubicCoefficient = 0.044715f;
// Beyond these the table is not consulted: gelu is 0 and x to well within half precision.
constexpr float kTableLow = -10.0f;
constexpr float kTableHigh = 10.0f;

// gelu of every half-precision value, rounded to half precision; built on first use (65536 entries).
const std::array<uint16_t, 65536>& gelu_table() {
  static const auto table = [] {
    std::array<uint16_t, 65536> t{};
    for (size_t bits = 0; bits < t.size(); ++bits) {
      const float x = f16_to_f32(f16_t{static_cast<uint16_t>(bits)});
      t[bits] = f32_to_f16(gelu(x)).bits;
    }
    return t;
  }();
  return table;
}

}  // namespace

float gelu(float x) { return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCubicCoefficient * x * x))); }

void gelu_mul(std::span<const float> gate, std::span<const float> up, std::span<float> out) {
  const auto& table = gelu_table();
  for (size_t i = 0; i < out.size(); ++i) {
    const float x = gate[i];
    float g;
    if (x <= kTableLow) {
      g = 0.0f;
    } else if (x >= kTableHigh) {
      g = x;
    } else {
      g = f16_to_f32(f16_t{table[f32_to_f16(x).bits]});
    }
    out[i] = g * up[i];
  }
}

}  // namespace infertune
