// The scalar reference matmul against the product computed in double from the codecs' decoded weights,
// for every type with a codec, including row ranges (the unit threads split) and several tokens; and the
// shape checks every kernel relies on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/half.h"
#include "kernels/matmul/scalar_matmul.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

struct Weights {
  std::vector<std::byte> bytes;  // [n_rows][row_bytes]
  std::vector<float> decoded;    // [n_rows][n_cols]
};

Weights make_weights(GgmlType type, size_t n_rows, size_t n_cols) {
  const size_t row_bytes = *ggml_row_bytes(type, n_cols);
  Weights w{std::vector<std::byte>(n_rows * row_bytes), std::vector<float>(n_rows * n_cols)};
  const auto values = random_values(n_rows * n_cols, 42);
  for (size_t r = 0; r < n_rows; ++r) {
    const auto bytes = std::span(w.bytes).subspan(r * row_bytes, row_bytes);
    EXPECT_TRUE(quantize_row(type, std::span(values).subspan(r * n_cols, n_cols), bytes).ok());
    EXPECT_TRUE(dequantize_row(type, bytes, std::span(w.decoded).subspan(r * n_cols, n_cols)).ok());
  }
  return w;
}

// The activation a weight of `type` meets: rounded to f16 / bf16 for F16 / BF16 weights (ggml's pairing),
// as it is for every other type.
double paired(GgmlType type, float x) {
  if (type == GgmlType::F16) return f16_to_f32(f32_to_f16(x));
  if (type == GgmlType::BF16) return bf16_to_f32(f32_to_bf16(x));
  return x;
}

class ScalarMatmulTest : public ::testing::TestWithParam<GgmlType> {};

TEST_P(ScalarMatmulTest, MatchesDoubleProductOfDecodedWeights) {
  const GgmlType type = GetParam();
  constexpr size_t kRows = 7, kCols = 512, kTokens = 3;
  const Weights w = make_weights(type, kRows, kCols);
  const auto x = random_values(kTokens * kCols, 9);
  std::vector<float> y(kTokens * kRows, -999.0f);
  const MatmulProblem problem{type, w.bytes, kRows, kCols, x.data(), kTokens, y.data()};
  ASSERT_TRUE(check_matmul_problem(problem).ok());
  auto kernel = MatmulRegistry(compiled_matmul_variants(), std::string("scalar")).find(type);
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;

  // Rows [2, 5) only: the rest of y stays as it was.
  kernel->fn(problem, 2, 5);
  for (size_t t = 0; t < kTokens; ++t) {
    for (size_t r = 0; r < kRows; ++r) {
      const float got = y[t * kRows + r];
      if (r < 2 || r >= 5) {
        EXPECT_EQ(got, -999.0f);
        continue;
      }
      double want = 0, magnitude = 0;
      for (size_t i = 0; i < kCols; ++i) {
        const double xi = paired(type, x[t * kCols + i]);
        want += xi * w.decoded[r * kCols + i];
        magnitude += std::fabs(xi * w.decoded[r * kCols + i]);
      }
      // Double accumulation: only the final rounding to float remains.
      EXPECT_NEAR(got, want, 1e-7 * magnitude + 1e-6 * std::fabs(want))
          << ggml_type_name(type) << " t" << t << " r" << r;
    }
  }
  ASSERT_TRUE(matmul(problem).ok());  // the whole problem through the registry
  for (float v : y) EXPECT_NE(v, -999.0f);
}

std::vector<GgmlType> codec_types() {
  std::vector<GgmlType> types;
  for (uint32_t id = 0; id < 64; ++id) {
    const auto traits = ggml_type_traits(id);
    if (traits && has_reference_codec(traits->type)) types.push_back(traits->type);
  }
  return types;
}

INSTANTIATE_TEST_SUITE_P(EveryCodecType, ScalarMatmulTest, ::testing::ValuesIn(codec_types()),
                         [](const auto& info) { return std::string(ggml_type_name(info.param)); });

TEST(ScalarMatmulDotTest, DoubleAccumulationSurvivesCancellation) {
  // 1e8 + 1 - 1e8 in float is 0; accumulated in double it is 1 (the sum the F32 fixtures need).
  const std::vector<float> a = {1e8f, 1.0f, -1e8f, 1.0f, 0.5f};
  const std::vector<float> b = {1.0f, 1.0f, 1.0f, 1.0f, 2.0f};
  EXPECT_EQ(dot_f32_double(a.data(), b.data(), a.size()), 3.0);
}

TEST(MatmulProblemTest, ShapeErrorsNameTheSizes) {
  std::vector<std::byte> weights(34 * 4);  // four q8_0 blocks
  std::vector<float> x(64), y(4);
  MatmulProblem p{GgmlType::Q8_0, weights, 2, 64, x.data(), 1, y.data()};
  EXPECT_TRUE(check_matmul_problem(p).ok());
  p.n_cols = 48;  // not whole blocks of 32
  EXPECT_THAT(check_matmul_problem(p).error().message, HasSubstr("48"));
  p.n_cols = 64;
  p.n_rows = 3;  // weights hold two rows
  EXPECT_THAT(check_matmul_problem(p).error().message, HasSubstr("3 rows"));
  p.n_rows = 2;
  p.y = nullptr;
  EXPECT_FALSE(check_matmul_problem(p).ok());
}

}  // namespace
}  // namespace infertune
