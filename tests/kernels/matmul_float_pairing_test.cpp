// The activation pairing of the float weight types, on every compiled variant this CPU runs: F16 weights
// meet activations rounded to f16, BF16 weights activations rounded to bf16 (round to nearest even, as
// ggml's vec_dot_type conversions do), F32 weights the activations unchanged. With one-hot weight rows
// (row r = unit vector e_r) every output is exactly the paired activation, so the kernels' rounding is
// compared bit for bit with kernels/half.h (itself checked against F16C and a double computation).
// On a CPU with avx512-bf16 the avx512vnni variant's BF16 kernel is VDPBF16PS, which counts subnormal bf16
// inputs as zero (as the instruction defines); there the one subnormal case must come out as zero, and the
// variant's other BF16 kernel (widening by shifts) is checked too.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/half.h"
#include "kernels/matmul/avx512/matmul_avx512bf16.h"
#include "kernels/matmul/avx512/matmul_avx512vnni.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

struct FloatKernelCase {
  std::string variant;
  GgmlType type;
  MatmulFn fn;
};

void PrintTo(const FloatKernelCase& c, std::ostream* os) { *os << c.variant << " " << ggml_type_name(c.type); }

std::vector<FloatKernelCase> float_kernel_cases() {
  std::vector<FloatKernelCase> cases;
  for (const MatmulVariant& v : compiled_matmul_variants()) {
    if (v.available && !v.available()) continue;
    for (const MatmulKernel& k : v.kernels()) {
      if (k.type == GgmlType::F32 || k.type == GgmlType::F16 || k.type == GgmlType::BF16) {
        cases.push_back({std::string(v.name), k.type, k.fn});
      }
    }
    if (v.name == "avx512vnni" && avx512bf16_dot_kernel()) {
      cases.push_back({"avx512vnni_widening", GgmlType::BF16, avx512vnni_bf16_widening_kernel()});
    }
  }
  return cases;
}

// What a kernel that treats subnormal inputs as zero (VDPBF16PS) gives for the paired value `v`.
float flushed(float v) { return std::fpclassify(v) == FP_SUBNORMAL ? 0.0f : v; }

float paired(GgmlType type, float x) {
  if (type == GgmlType::F16) return f16_to_f32(f32_to_f16(x));
  if (type == GgmlType::BF16) return bf16_to_f32(f32_to_bf16(x));
  return x;
}

// Weight rows e_0 .. e_{n-1} of n values in `type` (0 and 1 are exact in every float type).
std::vector<std::byte> identity_weights(GgmlType type, size_t n) {
  std::vector<float> values(n * n, 0.0f);
  for (size_t r = 0; r < n; ++r) values[r * n + r] = 1.0f;
  std::vector<std::byte> bytes(*ggml_row_bytes(type, n) * n);
  EXPECT_TRUE(quantize_row(type, values, bytes).ok());
  return bytes;
}

// Finite activations that exercise the rounding: exact values, ties that round down and up (to even),
// values just off a tie, f16 subnormals and the largest finite f16, bf16 of float subnormals, both signs.
std::vector<float> rounding_cases() {
  std::vector<float> v = {0.0f, -0.0f, 1.0f, -2.5f, 3.0e-3f, 65504.0f, -65504.0f, 6.0e-8f, 3.0e-6f, -4.0e-5f, 1e-39f};
  for (uint32_t base : {0x3f800000u, 0x40490fdbu, 0xc1234567u, 0x3c000000u}) {
    // f16 keeps 10 mantissa bits (drops 13), bf16 keeps 7 (drops 16): ties and neighbours of ties for both.
    for (uint32_t dropped : {0x1000u, 0x3000u, 0x0fffu, 0x1001u, 0x8000u, 0x18000u, 0x7fffu, 0x8001u}) {
      v.push_back(std::bit_cast<float>((base & ~0x1ffffu) | dropped));
    }
  }
  return v;  // 43 values: five full 8-lane vectors and a tail of 3
}

class FloatPairingTest : public ::testing::TestWithParam<FloatKernelCase> {};

TEST_P(FloatPairingTest, OutputsAreThePairedActivations) {
  const FloatKernelCase& c = GetParam();
  const std::vector<float> cases = rounding_cases();
  const size_t n = cases.size();
  constexpr size_t kTokens = 3;
  const std::vector<std::byte> weights = identity_weights(c.type, n);
  std::vector<float> x(kTokens * n);
  for (size_t t = 0; t < kTokens; ++t) {
    for (size_t i = 0; i < n; ++i) x[t * n + i] = cases[(i + 7 * t) % n] * (t == 2 ? -1.0f : 1.0f);
  }
  std::vector<float> y(kTokens * n, -999.0f);
  const MatmulProblem problem{c.type, weights, n, n, x.data(), kTokens, y.data()};
  ASSERT_TRUE(check_matmul_problem(problem).ok());
  c.fn(problem, 0, n);
  for (size_t t = 0; t < kTokens; ++t) {
    for (size_t r = 0; r < n; ++r) {
      float want = paired(c.type, x[t * n + r]);
      if (c.fn == avx512bf16_dot_kernel()) want = flushed(want);
      // Bits, except that the sign of a zero result follows the sum's (+0 + -0 = +0).
      if (want == 0.0f) {
        EXPECT_EQ(y[t * n + r], 0.0f) << "t" << t << " r" << r;
      } else {
        EXPECT_EQ(std::bit_cast<uint32_t>(y[t * n + r]), std::bit_cast<uint32_t>(want))
            << c.variant << " " << ggml_type_name(c.type) << " x = " << x[t * n + r] << " got " << y[t * n + r]
            << " want " << want;
      }
    }
  }
}

// Values the one-hot test cannot carry (0 * inf is NaN in the other rows): one-value rows.
TEST_P(FloatPairingTest, InfinitiesNaNsAndF16Overflow) {
  const FloatKernelCase& c = GetParam();
  const std::vector<std::byte> one = identity_weights(c.type, 1);
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {inf, -inf, std::numeric_limits<float>::quiet_NaN(), 65520.0f, -70000.0f, 3.0e38f}) {
    float y = 0.0f;
    c.fn({c.type, one, 1, 1, &v, 1, &y}, 0, 1);
    const float want = paired(c.type, v);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(y)) << c.variant << " " << ggml_type_name(c.type) << " x = " << v;
    } else {
      EXPECT_EQ(y, want) << c.variant << " " << ggml_type_name(c.type) << " x = " << v;
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<FloatKernelCase>& info) {
  return info.param.variant + "_" + std::string(ggml_type_name(info.param.type));
}

INSTANTIATE_TEST_SUITE_P(AvailableVariants, FloatPairingTest, ::testing::ValuesIn(float_kernel_cases()), case_name);

}  // namespace
}  // namespace infertune
