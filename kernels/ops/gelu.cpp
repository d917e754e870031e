#include "kernels/ops/gelu.h"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/half.h"
#include "kernels/ops/ops_kernels.h"

namespace infertune {
namespace {

constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
constexpr float kCubicCoefficient = 0.044715f;
constexpr size_t kHalfValues = 65536;

}  // namespace

float gelu(float x) { return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCubicCoefficient * x * x))); }

const uint16_t* gelu_f16_table() {
  static const auto table = [] {
    std::array<uint16_t, kHalfValues + 1> t{};  // the last: the gather pad
    for (size_t bits = 0; bits < kHalfValues; ++bits) {
      const float x = f16_to_f32(f16_t{static_cast<uint16_t>(bits)});
      t[bits] = f32_to_f16(gelu(x)).bits;
    }
    return t;
  }();
  return table.data();
}

void gelu_mul_reference(const float* gate, const float* up, size_t n, float* out) {
  const uint16_t* table = gelu_f16_table();
  for (size_t i = 0; i < n; ++i) {
    const float x = gate[i];
    float g;
    if (x <= kGeluTableLow) {
      g = 0.0f;
    } else if (x >= kGeluTableHigh) {
      g = x;
    } else {
      g = f16_to_f32(f16_t{table[f32_to_f16(x).bits]});
    }
    out[i] = g * up[i];
  }
}

void gelu_mul(std::span<const float> gate, std::span<const float> up, std::span<float> out) {
  ops_kernels().gelu_mul(gate.data(), up.data(), out.size(), out.data());
}

}  // namespace infertune
