// RoPE against the formula evaluated in double: pair i of a head rotates by
// pos * freq_scale * base^(-2i/n_rot) / factor[i], pairs (2i, 2i+1) interleaved or (i, i + n_rot/2) NEOX,
// dimensions past n_rot untouched. Plus the property that makes rope work: the dot product of a rotated
// query and key depends only on the distance between their positions.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "kernels/ops/rope.h"

namespace infertune {
namespace {

std::vector<float> random_head(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// The reference: every angle from the closed formula in double.
std::vector<double> rope_reference(const std::vector<float>& head, const RopeParams& p, int64_t pos) {
  std::vector<double> out(head.begin(), head.end());
  const size_t half = p.n_rot / 2;
  for (size_t i = 0; i < half; ++i) {
    const double factor = p.freq_factors.empty() ? 1.0 : p.freq_factors[i];
    const double angle = pos * static_cast<double>(p.freq_scale) *
                         std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot) / factor;
    const size_t a = p.layout == RopeLayout::Interleaved ? 2 * i : i;
    const size_t b = p.layout == RopeLayout::Interleaved ? 2 * i + 1 : i + half;
    out[a] = head[a] * std::cos(angle) - head[b] * std::sin(angle);
    out[b] = head[a] * std::sin(angle) + head[b] * std::cos(angle);
  }
  return out;
}

std::vector<float> rope(std::vector<float> head, const RopeParams& p, int64_t pos) {
  std::vector<float> cos(p.n_rot / 2), sin(p.n_rot / 2);
  rope_angles(p, pos, cos, sin);
  rope_rotate(p, cos, sin, head);
  return head;
}

struct RopeCase {
  RopeLayout layout;
  uint32_t head_dim, n_rot;
  float base, scale;
  bool factors;
};

class RopeTest : public ::testing::TestWithParam<RopeCase> {
 protected:
  RopeParams params() {
    const RopeCase& c = GetParam();
    RopeParams p{c.n_rot, c.base, c.scale, c.layout, {}};
    if (c.factors) {
      factors_.resize(c.n_rot / 2);
      for (size_t i = 0; i < factors_.size(); ++i) factors_[i] = 1.0f + 0.5f * static_cast<float>(i % 4);
      p.freq_factors = factors_;
    }
    return p;
  }
  std::vector<float> factors_;
};

TEST_P(RopeTest, MatchesTheFormulaInDouble) {
  const RopeParams p = params();
  const auto head = random_head(GetParam().head_dim, 7);
  for (int64_t pos : {0, 1, 5, 37, 511, 4095}) {
    const auto got = rope(head, p, pos);
    const auto want = rope_reference(head, p, pos);
    // The angle is accumulated in float (as ggml does): its error grows with the position.
    const double tolerance = 2e-6 * (1 + static_cast<double>(pos));
    for (size_t i = 0; i < head.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], tolerance) << "pos " << pos << " dim " << i;
    }
  }
}

TEST_P(RopeTest, DimensionsPastNRotAreUntouched) {
  const RopeParams p = params();
  const auto head = random_head(GetParam().head_dim, 3);
  const auto got = rope(head, p, 123);
  for (size_t i = p.n_rot; i < head.size(); ++i) EXPECT_EQ(got[i], head[i]);
}

TEST_P(RopeTest, ScoresDependOnlyOnRelativePosition) {
  const RopeParams p = params();
  const auto q = random_head(GetParam().head_dim, 11);
  const auto k = random_head(GetParam().head_dim, 12);
  auto score = [&](int64_t qp, int64_t kp) {
    const auto a = rope(q, p, qp), b = rope(k, p, kp);
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
    return s;
  };
  EXPECT_NEAR(score(10, 3), score(107, 100), 1e-3);
  EXPECT_NEAR(score(3, 3), score(250, 250), 1e-3);
}

const RopeCase kCases[] = {
    {RopeLayout::Interleaved, 32, 32, 10000.0f, 1.0f, false},   // the fixtures' llama
    {RopeLayout::Neox, 32, 32, 10000.0f, 1.0f, false},          // the fixtures' qwen2
    {RopeLayout::Interleaved, 8, 8, 10000.0f, 1.0f, false},     // stories260K
    {RopeLayout::Neox, 64, 64, 1000000.0f, 1.0f, false},        // qwen2.5
    {RopeLayout::Interleaved, 64, 64, 500000.0f, 1.0f, true},   // llama-3 with rope_freqs
    {RopeLayout::Interleaved, 64, 32, 10000.0f, 0.25f, false},  // partial rotation, linear scaling x4
    {RopeLayout::Neox, 64, 48, 10000.0f, 0.5f, true},
};

INSTANTIATE_TEST_SUITE_P(Layouts, RopeTest, ::testing::ValuesIn(kCases));

TEST(RopeLayoutTest, PairsAreInterleavedOrHalves) {
  // A head with a single 1 in dimension 0 rotates into dimension 1 (interleaved) or n_rot/2 (NEOX).
  for (RopeLayout layout : {RopeLayout::Interleaved, RopeLayout::Neox}) {
    const RopeParams p{8, 10000.0f, 1.0f, layout, {}};
    std::vector<float> head(8, 0.0f);
    head[0] = 1.0f;
    const auto got = rope(head, p, 1);  // pair 0 turns by exactly 1 radian
    const size_t partner = layout == RopeLayout::Interleaved ? 1 : 4;
    EXPECT_NEAR(got[0], std::cos(1.0), 1e-7);
    EXPECT_NEAR(got[partner], std::sin(1.0), 1e-7);
    for (size_t i = 0; i < head.size(); ++i) {
      if (i != 0 && i != partner) {
        EXPECT_EQ(got[i], 0.0f) << i;
      }
    }
  }
}

TEST(RopeLayoutTest, PositionZeroIsTheIdentity) {
  const RopeParams p{32, 10000.0f, 1.0f, RopeLayout::Neox, {}};
  const auto head = random_head(32, 5);
  EXPECT_EQ(rope(head, p, 0), head);
}

}  // namespace
}  // namespace infertune
