// The element-wise ops (SiLU, the SwiGLU product, bias and residual adds) against their double formulas,
// and the embedding lookup against the reference codecs' decoding of the ggml fixture rows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/ops/elementwise.h"
#include "kernels/ops/embedding.h"
#include "kernels/quant.h"
#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

TEST(ElementwiseTest, SiluMatchesFormula) {
  for (float x : {-80.0f, -10.0f, -1.0f, -1e-3f, 0.0f, 0.5f, 3.0f, 20.0f, 88.0f}) {
    const double want = x / (1.0 + std::exp(-static_cast<double>(x)));
    EXPECT_NEAR(silu(x), want, 1e-6 * (1 + std::fabs(want))) << x;
  }
  EXPECT_EQ(silu(-200.0f), -0.0f);  // exp overflows to inf: the limit, not NaN
}

// gpt-oss's unit: the gate clamped above at 7, up clamped to [-7, 7] and shifted by 1, sigmoid(1.702 g).
TEST(ElementwiseTest, SwigluOaiClampsThenGates) {
  const std::vector<float> gate = {-30.0f, -1.0f, 0.0f, 0.7f, 6.9f, 7.0f, 50.0f};
  const std::vector<float> up = {2.0f, -9.0f, 3.0f, -1.0f, 0.25f, 100.0f, -0.5f};
  std::vector<float> out(gate.size());
  swiglu_oai_mul(gate, up, out);
  for (size_t i = 0; i < out.size(); ++i) {
    const double g = std::min(static_cast<double>(gate[i]), 7.0);
    const double u = std::clamp(static_cast<double>(up[i]), -7.0, 7.0);
    const double want = g / (1.0 + std::exp(-1.702 * g)) * (u + 1.0);
    EXPECT_NEAR(out[i], want, 1e-6 * (1 + std::fabs(want))) << i;
  }
  EXPECT_NEAR(out[6], out[5] / 8.0f * 0.5f, 1e-5);  // both gates clamp to 7, up to 7 and -0.5
  std::vector<float> aliased = gate;
  swiglu_oai_mul(aliased, up, aliased);
  EXPECT_EQ(aliased, out);
}

TEST(ElementwiseTest, SiluMulGatesUp) {
  const std::vector<float> gate = {-2.0f, 0.0f, 1.0f, 4.0f};
  const std::vector<float> up = {3.0f, 5.0f, -2.0f, 0.5f};
  std::vector<float> out(4);
  silu_mul(gate, up, out);
  for (size_t i = 0; i < out.size(); ++i) {
    const double want = gate[i] / (1.0 + std::exp(-static_cast<double>(gate[i]))) * up[i];
    EXPECT_NEAR(out[i], want, 1e-6);
  }
  std::vector<float> aliased = gate;
  silu_mul(aliased, up, aliased);
  EXPECT_EQ(aliased, out);
}

TEST(ElementwiseTest, BiasIsAddedToEveryRow) {
  std::vector<float> rows = {1, 2, 3, 10, 20, 30};
  const std::vector<float> bias = {0.5f, -1.0f, 2.0f};
  add_bias_rows(rows, bias);
  EXPECT_EQ(rows, (std::vector<float>{1.5f, 1.0f, 5.0f, 10.5f, 19.0f, 32.0f}));
  add_bias_rows(rows, {});  // no bias: nothing changes (and no endless loop)
  EXPECT_EQ(rows[0], 1.5f);
  std::vector<float> x = {1, 2};
  add_in_place(x, std::vector<float>{3, -4});
  EXPECT_EQ(x, (std::vector<float>{4, -2}));
}

class EmbeddingTest : public ::testing::TestWithParam<GgmlType> {};

TEST_P(EmbeddingTest, RowIsTheCodecsDecodingOfThatRow) {
  const GgmlType type = GetParam();
  const std::string name(ggml_type_name(type));
  const auto table = test::read_file_bytes(test::fixture_path("quant/" + name + ".quant"));
  const auto decoded = test::read_f32_file(test::fixture_path("quant/" + name + ".dequant.f32"));
  constexpr size_t kRowLength = 1024;
  const size_t n_rows = decoded.size() / kRowLength;
  ASSERT_EQ(n_rows, 8u);
  std::vector<float> row(kRowLength);
  for (size_t r = 0; r < n_rows; ++r) {
    ASSERT_TRUE(embedding_row(type, table, r, row).ok());
    for (size_t i = 0; i < kRowLength; ++i) ASSERT_EQ(row[i], decoded[r * kRowLength + i]) << name << " row " << r;
  }
  const Status outside = embedding_row(type, table, n_rows, row);
  ASSERT_FALSE(outside.ok());
  EXPECT_THAT(outside.error().message, HasSubstr("outside the table"));
}

INSTANTIATE_TEST_SUITE_P(FixtureTypes, EmbeddingTest,
                         ::testing::Values(GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q8_0,
                                           GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::IQ4_XS),
                         [](const auto& info) { return std::string(ggml_type_name(info.param)); });

TEST(EmbeddingErrorsTest, RowLengthMustBeWholeBlocks) {
  std::vector<std::byte> table(1000);
  std::vector<float> row(100);  // not a multiple of 32
  EXPECT_FALSE(embedding_row(GgmlType::Q8_0, table, 0, row).ok());
  std::vector<float> block_row(256);  // one iq2_xxs block: the row fits, but the type has no codec
  EXPECT_FALSE(embedding_row(GgmlType::IQ2_XXS, table, 0, block_row).ok());
}

}  // namespace
}  // namespace infertune
