// rms_norm and softmax against straightforward double-precision formulas, including the inputs that
// break naive implementations: huge and tiny magnitudes, masked (-inf) scores, an all-masked row.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/ops/rms_norm.h"
#include "kernels/ops/softmax.h"

namespace infertune {
namespace {

std::vector<float> random_values(size_t n, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<double> rms_norm_reference(const std::vector<float>& x, const std::vector<float>& gain, double eps) {
  double ss = 0;
  for (float v : x) ss += static_cast<double>(v) * v;
  const double inv = 1.0 / std::sqrt(ss / x.size() + eps);
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] * inv * gain[i];
  return out;
}

TEST(RmsNormTest, MatchesDoubleFormula) {
  for (float scale : {1e-3f, 1.0f, 1e3f}) {
    const auto x = random_values(256, scale, 1);
    const auto gain = random_values(256, 1.0f, 2);
    std::vector<float> out(x.size());
    rms_norm(x, gain, 1e-5f, out);
    const auto want = rms_norm_reference(x, gain, 1e-5);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(out[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << scale;
  }
}

TEST(RmsNormTest, EpsilonDominatesTinyInputs) {
  // With mean(x^2) << eps the output is x / sqrt(eps): the epsilon is inside the square root.
  const std::vector<float> x(64, 1e-6f), gain(64, 1.0f);
  std::vector<float> out(64);
  rms_norm(x, gain, 1e-2f, out);
  EXPECT_NEAR(out[0], 1e-6 / std::sqrt(1e-2 + 1e-12), 1e-9);
}

TEST(RmsNormTest, InPlace) {
  auto x = random_values(96, 2.0f, 3);
  const auto gain = random_values(96, 1.0f, 4);
  std::vector<float> separate(x.size());
  rms_norm(x, gain, 1e-6f, separate);
  rms_norm(x, gain, 1e-6f, x);
  EXPECT_EQ(x, separate);
}

std::vector<double> softmax_reference(const std::vector<float>& x) {
  double max = -std::numeric_limits<double>::infinity();
  for (float v : x) max = std::max<double>(max, v);
  double sum = 0;
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) sum += out[i] = std::exp(x[i] - max);
  for (double& v : out) v /= sum;
  return out;
}

TEST(SoftmaxTest, MatchesDoubleFormula) {
  for (float scale : {0.1f, 3.0f, 30.0f}) {
    auto x = random_values(300, scale, 5);
    const auto want = softmax_reference(x);
    softmax(x);
    double total = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_NEAR(x[i], want[i], 1e-6 * want[i] + 1e-12) << scale;
      total += x[i];
    }
    EXPECT_NEAR(total, 1.0, 1e-5);
  }
}

TEST(SoftmaxTest, LargeValuesDoNotOverflow) {
  std::vector<float> x = {1000.0f, 1001.0f, 999.0f, -1000.0f};
  const auto want = softmax_reference(x);
  softmax(x);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(std::isfinite(x[i]));
    EXPECT_NEAR(x[i], want[i], 1e-6);
  }
  EXPECT_NEAR(x[1], 1.0 / (1.0 + std::exp(-1.0) + std::exp(-2.0)), 1e-6);
}

TEST(SoftmaxTest, MaskedEntriesGetZero) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.5f, -inf, 2.0f, -inf};
  softmax(x);
  EXPECT_EQ(x[1], 0.0f);
  EXPECT_EQ(x[3], 0.0f);
  EXPECT_NEAR(x[0] + x[2], 1.0f, 1e-6);
  EXPECT_NEAR(x[2] / x[0], std::exp(1.5), 1e-4);

  std::vector<float> all_masked(5, -inf);
  softmax(all_masked);
  for (float v : all_masked) EXPECT_EQ(v, 0.0f);  // not NaN
}

}  // namespace
}  // namespace infertune
