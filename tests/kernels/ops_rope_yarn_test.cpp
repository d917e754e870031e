// YaRN rope against an independent double-precision evaluation of the definition (the YaRN paper,
// "YaRN: Efficient Context Window Extension of Large Language Models", and its reference code, which ggml
// follows): with s the scaling factor (freq_scale = 1/s), L the original context, b the base and |D| = n_rot,
//   theta_i  = b^(-2i/|D|) / factor_i                       (pair i's frequency)
//   r(i)     = L / (2 pi / theta_i)                          (rotations over the original context)
//   d(beta)  = |D| ln(L / (2 pi beta)) / (2 ln b)            (the fractional pair with r = beta)
//   low      = max(0, floor(d(beta_fast))), high = min(|D| - 1, ceil(d(beta_slow)))
//   gamma(i) = 1 - clamp((i - low) / max(0.001, high - low), 0, 1)   (1: extrapolate, 0: interpolate)
//   angle    = pos theta_i ((1 - m) / s + m),  m = gamma(i) * ext_factor
//   mscale   = attn_factor (0.1 ln s + 1)                    (the paper's sqrt(1/t), on cos and sin)
// over several factors, rotation widths, bases and positions up to far beyond the original context; plus
// the properties that tie it to the paper's intent (pairs with r > beta_fast keep their angle, pairs with
// r < beta_slow are interpolated linearly) and that none / linear rope are bit-for-bit unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <vector>

#include "kernels/ops/rope.h"

namespace infertune {
namespace {

constexpr double kPi = std::numbers::pi;

struct YarnCase {
  uint32_t n_rot;
  float base;
  float factor;  // s: the context grows s times
  uint32_t n_ctx_orig;
  float ext_factor = 1.0f;
  float attn_factor = 1.0f;
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
  bool freq_factors = false;
};

// The double-precision reference of the header comment.
struct YarnReference {
  double low = 0, high = 0, mscale = 1;
  std::vector<double> cos, sin, angle;
};

double corr_dim(const RopeParams& p, double beta) {
  return p.n_rot * std::log(p.n_ctx_orig / (2 * kPi * beta)) / (2 * std::log(static_cast<double>(p.freq_base)));
}

YarnReference yarn_reference(const RopeParams& p, int64_t pos) {
  YarnReference ref;
  ref.low = std::max(0.0, std::floor(corr_dim(p, p.beta_fast)));
  ref.high = std::min(p.n_rot - 1.0, std::ceil(corr_dim(p, p.beta_slow)));
  const double s = 1.0 / static_cast<double>(p.freq_scale);
  const bool yarn = p.ext_factor != 0.0f;
  ref.mscale = p.attn_factor * (yarn ? 0.1 * std::log(s) + 1 : 1.0);
  for (size_t i = 0; i < p.n_rot / 2; ++i) {
    const double factor = p.freq_factors.empty() ? 1.0 : p.freq_factors[i];
    const double theta = std::pow(static_cast<double>(p.freq_base), -2.0 * i / p.n_rot) / factor;
    const double gamma = 1 - std::clamp((i - ref.low) / std::max(0.001, ref.high - ref.low), 0.0, 1.0);
    const double m = yarn ? gamma * p.ext_factor : 0.0;
    const double angle = pos * theta * ((1 - m) / s + m);
    ref.angle.push_back(angle);
    ref.cos.push_back(std::cos(angle) * ref.mscale);
    ref.sin.push_back(std::sin(angle) * ref.mscale);
  }
  return ref;
}

class RopeYarnTest : public ::testing::TestWithParam<YarnCase> {
 protected:
  RopeParams params() {
    const YarnCase& c = GetParam();
    RopeParams p;
    p.n_rot = c.n_rot;
    p.freq_base = c.base;
    p.freq_scale = 1.0f / c.factor;
    p.ext_factor = c.ext_factor;
    p.attn_factor = c.attn_factor;
    p.n_ctx_orig = c.n_ctx_orig;
    p.beta_fast = c.beta_fast;
    p.beta_slow = c.beta_slow;
    if (c.freq_factors) {
      factors_.resize(c.n_rot / 2);
      for (size_t i = 0; i < factors_.size(); ++i) factors_[i] = 1.0f + 0.75f * static_cast<float>(i % 3);
      p.freq_factors = factors_;
    }
    return p;
  }
  std::vector<float> factors_;
};

TEST_P(RopeYarnTest, CorrectionDimsMatchTheFormula) {
  const RopeParams p = params();
  const YarnReference ref = yarn_reference(p, 0);
  const RopeCorrDims dims = rope_yarn_corr_dims(p);
  EXPECT_EQ(dims.low, ref.low);
  EXPECT_EQ(dims.high, ref.high);
}

TEST_P(RopeYarnTest, MagnitudeIsAttnFactorTimesTheTemperature) {
  const RopeParams p = params();
  const double want = yarn_reference(p, 0).mscale;
  EXPECT_NEAR(rope_mscale(p), want, 1e-6 * want);
  // Every pair's (cos, sin) has exactly that length, at any position.
  std::vector<float> cos(p.n_rot / 2), sin(p.n_rot / 2);
  rope_angles(p, 12345, cos, sin);
  for (size_t i = 0; i < cos.size(); ++i) EXPECT_NEAR(std::hypot(cos[i], sin[i]), want, 2e-6 * want) << i;
}

TEST_P(RopeYarnTest, AnglesMatchTheFormulaInDouble) {
  const RopeParams p = params();
  const uint32_t L = p.n_ctx_orig;
  // Up to 16 times the original context: the positions YaRN exists for.
  for (int64_t pos : {int64_t{0}, int64_t{1}, int64_t{17}, int64_t{L} - 1, int64_t{L}, int64_t{L} + 1, 2 * int64_t{L},
                      4 * int64_t{L} - 1, 16 * int64_t{L}}) {
    const YarnReference ref = yarn_reference(p, pos);
    std::vector<float> cos(p.n_rot / 2), sin(p.n_rot / 2);
    rope_angles(p, pos, cos, sin);
    for (size_t i = 0; i < cos.size(); ++i) {
      // The angle is accumulated pair by pair in float (as ggml does): a relative error of a few float
      // epsilons per pair, which at large positions is what dominates.
      const double tolerance = ref.mscale * (2.5e-7 * (i + 4) * std::abs(ref.angle[i]) + 1e-6);
      ASSERT_NEAR(cos[i], ref.cos[i], tolerance) << "pos " << pos << " pair " << i;
      ASSERT_NEAR(sin[i], ref.sin[i], tolerance) << "pos " << pos << " pair " << i;
    }
  }
}

// The paper's ramp, read in the pairs' rotation counts r over the original context: a pair that turns
// more than beta_fast times keeps its trained angle (no interpolation) and one that turns fewer than
// beta_slow times is interpolated like linear scaling; the two ends are exact, not approximate.
TEST_P(RopeYarnTest, FastPairsKeepTheirAngleAndSlowPairsAreInterpolated) {
  const RopeParams yarn = params();
  // With ext_factor < 1 the fast pairs mix in part of the interpolation too; only the slow end is exact.
  const bool full_mix = yarn.ext_factor == 1.0f;
  const RopeCorrDims dims = rope_yarn_corr_dims(yarn);
  const float mscale = rope_mscale(yarn);
  RopeParams extrapolated = yarn, interpolated = yarn;  // plain rope with the same magnitude
  extrapolated.ext_factor = interpolated.ext_factor = 0.0f;
  extrapolated.attn_factor = interpolated.attn_factor = mscale;
  extrapolated.freq_scale = 1.0f;
  const size_t n = yarn.n_rot / 2;
  std::vector<float> yc(n), ys(n), ec(n), es(n), ic(n), is(n);
  const int64_t pos = 3 * static_cast<int64_t>(yarn.n_ctx_orig) + 5;
  rope_angles(yarn, pos, yc, ys);
  rope_angles(extrapolated, pos, ec, es);
  rope_angles(interpolated, pos, ic, is);
  size_t n_fast = 0, n_slow = 0;
  for (size_t i = 0; i < n; ++i) {
    const double factor = yarn.freq_factors.empty() ? 1.0 : yarn.freq_factors[i];
    const double theta = std::pow(static_cast<double>(yarn.freq_base), -2.0 * i / yarn.n_rot) / factor;
    const double rotations = yarn.n_ctx_orig * theta / (2 * kPi);
    if (full_mix && static_cast<float>(i) <= dims.low) {
      // Pair indices up to d(beta_fast) are the ones turning at least beta_fast times (freq_factors aside;
      // low is clamped to 0, so pair 0 is always extrapolated).
      if (yarn.freq_factors.empty() && i <= corr_dim(yarn, yarn.beta_fast)) {
        EXPECT_GE(rotations, yarn.beta_fast) << i;
      }
      EXPECT_EQ(yc[i], ec[i]) << "pair " << i << " should keep its trained angle";
      EXPECT_EQ(ys[i], es[i]) << i;
      ++n_fast;
    } else if (static_cast<float>(i) >= dims.high) {
      if (yarn.freq_factors.empty()) {
        EXPECT_LE(rotations, yarn.beta_slow) << i;
      }
      EXPECT_EQ(yc[i], ic[i]) << "pair " << i << " should be interpolated";
      EXPECT_EQ(ys[i], is[i]) << i;
      ++n_slow;
    }
  }
  EXPECT_GE(n_fast, full_mix ? 1u : 0u);
  EXPECT_GE(n_slow, 1u);
}

const YarnCase kYarnCases[] = {
    {32, 10000.0f, 4.0f, 32},                                    // the cross-check models: head 32, original context 32
    {32, 10000.0f, 4.0f, 256},                                   // synth's example
    {64, 10000.0f, 4.0f, 4096},                                  // a llama-2 extended to 16k
    {128, 500000.0f, 8.0f, 8192},                                // a llama-3 extended to 64k
    {64, 1000000.0f, 4.0f, 32768},                               // Qwen2.5's documented YaRN setting
    {128, 10000.0f, 16.0f, 2048, 1.0f, 1.0f, 16.0f, 2.0f},       // other betas
    {48, 10000.0f, 2.0f, 2048, 0.5f, 1.25f},                     // half the extrapolation mix, an attn_factor
    {64, 500000.0f, 8.0f, 8192, 1.0f, 1.0f, 32.0f, 1.0f, true},  // with llama-3 frequency factors
};

INSTANTIATE_TEST_SUITE_P(Factors, RopeYarnTest, ::testing::ValuesIn(kYarnCases));

// The rope of before YaRN, verbatim in float: none and linear must give the very same bits.
void pre_yarn_angles(const RopeParams& p, int64_t pos, std::vector<float>& cos, std::vector<float>& sin) {
  const float step = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
  float theta = static_cast<float>(pos);
  for (size_t i = 0; i < p.n_rot / 2; ++i) {
    const float factor = p.freq_factors.empty() ? 1.0f : p.freq_factors[i];
    const float angle = p.freq_scale * (theta / factor);
    cos[i] = std::cos(angle);
    sin[i] = std::sin(angle);
    theta *= step;
  }
}

TEST(RopeYarnCompat, NoneAndLinearAreBitForBitUnchanged) {
  std::vector<float> factors(32);
  for (size_t i = 0; i < factors.size(); ++i) factors[i] = 1.0f + 0.5f * static_cast<float>(i % 4);
  for (float scale : {1.0f, 0.5f, 0.25f, 0.125f}) {
    for (bool with_factors : {false, true}) {
      RopeParams p;
      p.n_rot = 64;
      p.freq_base = 500000.0f;
      p.freq_scale = scale;
      p.n_ctx_orig = 4096;  // ignored while ext_factor is 0
      if (with_factors) p.freq_factors = factors;
      std::vector<float> cos(32), sin(32), want_cos(32), want_sin(32);
      for (int64_t pos : {0, 1, 100, 4095, 70000}) {
        rope_angles(p, pos, cos, sin);
        pre_yarn_angles(p, pos, want_cos, want_sin);
        for (size_t i = 0; i < cos.size(); ++i) {
          ASSERT_EQ(std::bit_cast<uint32_t>(cos[i]), std::bit_cast<uint32_t>(want_cos[i])) << scale << " " << pos;
          ASSERT_EQ(std::bit_cast<uint32_t>(sin[i]), std::bit_cast<uint32_t>(want_sin[i])) << scale << " " << pos;
        }
      }
    }
  }
}

TEST(RopeYarnCompat, YarnWithoutScalingIsPlainRope) {
  // s = 1: extrapolated and interpolated angles coincide and the temperature term is ln(1) = 0.
  RopeParams plain;
  plain.n_rot = 32;
  RopeParams yarn = plain;
  yarn.ext_factor = 1.0f;
  yarn.n_ctx_orig = 64;
  EXPECT_EQ(rope_mscale(yarn), 1.0f);
  std::vector<float> a(16), b(16), c(16), d(16);
  rope_angles(plain, 777, a, b);
  rope_angles(yarn, 777, c, d);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_FLOAT_EQ(a[i], c[i]) << i;
    EXPECT_FLOAT_EQ(b[i], d[i]) << i;
  }
}

TEST(RopeYarnCompat, TheTemperatureOfTheCommonFactors) {
  // sqrt(1/t) = 0.1 ln(s) + 1 (the paper's eq. 22): 1.0693 for s = 2, 1.1386 for s = 4, 1.2079 for s = 8.
  for (auto [s, want] : {std::pair{2.0f, 1.0693147}, std::pair{4.0f, 1.1386294}, std::pair{8.0f, 1.2079442}}) {
    RopeParams p;
    p.n_rot = 64;
    p.freq_scale = 1.0f / s;
    p.ext_factor = 1.0f;
    EXPECT_NEAR(rope_mscale(p), want, 1e-6) << s;
    p.ext_factor = 0.0f;  // linear scaling has no temperature
    EXPECT_EQ(rope_mscale(p), 1.0f) << s;
  }
}

}  // namespace
}  // namespace infertune
