// Change-point detection (reports/history/change_points.h) on synthetic series with known steps and noise,
// and the Mann-Whitney p-values it rests on against values counted by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "reports/history/change_points.h"
#include "reports/history/rank_sum_test.h"

namespace infertune {
namespace {

using Series = std::vector<std::vector<double>>;

// Normal noise from the generator's raw output (Box-Muller), so a seed gives the same series everywhere.
class Noise {
 public:
  explicit Noise(uint64_t seed) : rng_(seed) {}
  double normal() {
    const double u1 = (static_cast<double>(rng_() >> 11) + 1) / 9007199254740993.0;
    const double u2 = static_cast<double>(rng_() >> 11) / 9007199254740992.0;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  }

 private:
  std::mt19937_64 rng_;
};

// levels[i] per point, `samples` repetitions each with relative noise `noise`, and a per-point drift
// (the sweep's own state) of relative size `point_noise`.
Series noisy(const std::vector<double>& levels, uint64_t seed, double noise = 0.02, size_t samples = 5,
             double point_noise = 0.0) {
  Noise n(seed);
  Series series;
  for (double level : levels) {
    const double point_level = level * (1 + point_noise * n.normal());
    std::vector<double>& point = series.emplace_back();
    for (size_t s = 0; s < samples; ++s) point.push_back(point_level * (1 + noise * n.normal()));
  }
  return series;
}

std::vector<double> steps(std::initializer_list<std::pair<size_t, double>> runs) {
  std::vector<double> levels;
  for (const auto& [count, level] : runs) levels.insert(levels.end(), count, level);
  return levels;
}

TEST(HistoryRankSum, MidRanksAndTies) {
  const std::vector<double> values{3, 1, 2, 2};
  EXPECT_EQ(mid_ranks(values), (std::vector<double>{4, 1, 2.5, 2.5}));
  EXPECT_EQ(tie_term(values), 6);  // one pair: 2^3 - 2
  EXPECT_EQ(tie_term(std::vector<double>{1, 2, 3}), 0);
}

TEST(HistoryRankSum, ExactPValuesMatchCountedArrangements) {
  // Complete separation: 2 of the C(N, m) equally likely arrangements are as extreme.
  EXPECT_NEAR(mann_whitney_p(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6}), 2.0 / 20, 1e-12);
  EXPECT_NEAR(mann_whitney_p(std::vector<double>{6, 7, 8, 9, 10}, std::vector<double>{1, 2, 3, 4, 5}), 2.0 / 252,
              1e-12);
  std::vector<double> many;
  for (int i = 0; i < 30; ++i) many.push_back(10 + i);
  EXPECT_NEAR(mann_whitney_p(std::vector<double>{1, 2, 3}, many), 2.0 / 5456, 1e-12);  // C(33, 3) = 5456
  // {1,3,5} vs {2,4,6}: U = 3; of the 20 arrangements 7 have U <= 3, so p = 2 x 7/20.
  EXPECT_NEAR(mann_whitney_p(std::vector<double>{1, 3, 5}, std::vector<double>{2, 4, 6}), 0.7, 1e-12);
  EXPECT_EQ(mann_whitney_p(std::vector<double>{1, 2}, std::vector<double>{}), 1);
}

TEST(HistoryRankSum, ExactTableAtTwentyASide) {
  // Against the arrangements counted independently (f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u), in
  // Python), and close to the normal approximation, which is used past 20 a side.
  const RankSumNull exact(20, 20, 0);
  ASSERT_TRUE(exact.exact());
  EXPECT_FALSE(RankSumNull(40, 40, 0).exact());
  const double mean = 200, sd = std::sqrt(20.0 * 20 * 41 / 12);
  const std::pair<double, double> counted[] = {
      {163, 0.32726183552222143}, {128, 0.05239952187284973}, {105, 0.009483607191205005}};
  for (const auto& [u, p] : counted) {
    EXPECT_NEAR(exact.two_sided_p(u), p, 1e-12) << "u " << u;
    EXPECT_NEAR(exact.two_sided_p(2 * mean - u), p, 1e-12) << "symmetric, u " << u;
    const double normal = std::erfc((mean - u - 0.5) / sd / std::sqrt(2.0));
    EXPECT_NEAR(normal, p, 0.12 * p) << "u " << u;
  }
}

TEST(HistoryRankSum, TiesUseTheCorrectedNormalApproximation) {
  const std::vector<double> a{1, 1, 2, 2, 3}, b{2, 3, 3, 4, 4};
  const double p = mann_whitney_p(a, b);
  EXPECT_GT(p, 0.01);
  EXPECT_LT(p, 0.5);
  EXPECT_DOUBLE_EQ(p, mann_whitney_p(b, a));
  EXPECT_EQ(mann_whitney_p(std::vector<double>{5, 5}, std::vector<double>{5, 5, 5}), 1);
}

TEST(HistoryChangePoints, FifteenPercentStepAfterPointSixIsFoundThere) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Series series = noisy(steps({{6, 100}, {6, 85}}), seed, 0.02, 5, 0.005);
    const auto changes = detect_change_points(series);
    ASSERT_EQ(changes.size(), 1u) << "seed " << seed;
    EXPECT_EQ(changes[0].index, 6u) << "seed " << seed;
    EXPECT_LT(changes[0].relative_change, 0) << "a drop";
    EXPECT_NEAR(changes[0].relative_change, -0.15, 0.03);
    EXPECT_NEAR(changes[0].before_level, 100, 3);
    EXPECT_NEAR(changes[0].after_level, 85, 3);
    EXPECT_LE(changes[0].p_value, 0.01);
  }
}

TEST(HistoryChangePoints, RiseIsFoundWithItsDirection) {
  const auto changes = detect_change_points(noisy(steps({{5, 100}, {7, 112}}), 7));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].index, 5u);
  EXPECT_GT(changes[0].relative_change, 0.08);
}

TEST(HistoryChangePoints, RegressionInTheLatestBuildIsFound) {
  // What a CI job asks after each commit: 11 builds at one level, the newest 15% slower, 3 repetitions each.
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const auto changes = detect_change_points(noisy(steps({{11, 100}, {1, 85}}), seed, 0.02, 3));
    ASSERT_EQ(changes.size(), 1u) << "seed " << seed;
    EXPECT_EQ(changes[0].index, 11u);
  }
}

TEST(HistoryChangePoints, FlatNoisySeriesHasNoChangePoint) {
  // 300 flat series of 12 builds with a quiet host's noise: 1% per repetition, 0.5% per sweep.
  int false_changes = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    false_changes += static_cast<int>(detect_change_points(noisy(steps({{12, 100}}), seed, 0.01, 5, 0.005)).size());
  }
  EXPECT_EQ(false_changes, 0);
}

TEST(HistoryChangePoints, FalsePositiveRateOnANoisyHostStaysNearAlpha) {
  // 2% per repetition and 0.5% per sweep: one build's median now strays past 3% now and then, and the
  // significance test is what must hold the rate of false changes near alpha (1%).
  int false_changes = 0;
  const int series = 400;
  for (uint64_t seed = 1; seed <= series; ++seed) {
    false_changes += static_cast<int>(detect_change_points(noisy(steps({{12, 100}}), seed, 0.02, 5, 0.005)).size());
  }
  EXPECT_LE(false_changes, series * 15 / 1000) << "rate " << double(false_changes) / series;
}

TEST(HistoryChangePoints, PermutationTestHoldsItsLevelWithoutAMinimumEffect) {
  // With the minimum effect off, only the significance test stands between noise and a change: about
  // alpha = 1% of flat series may show one (the best of 11 splits is calibrated, not taken at face value).
  ChangePointOptions options;
  options.min_relative_change = 0;
  int series_with_changes = 0;
  const int trials = 300;
  for (uint64_t seed = 1; seed <= trials; ++seed) {
    series_with_changes += detect_change_points(noisy(steps({{12, 100}}), 1000 + seed), options).empty() ? 0 : 1;
  }
  EXPECT_LE(series_with_changes, trials * 3 / 100) << "rate " << double(series_with_changes) / trials;
}

TEST(HistoryChangePoints, StepBelowTheMinimumChangeIsNotReported) {
  // A 1% step with little noise is significant, but smaller than the default 3%.
  const Series series = noisy(steps({{6, 100}, {6, 101}}), 3, 0.002);
  EXPECT_TRUE(detect_change_points(series).empty());
  ChangePointOptions half_percent;
  half_percent.min_relative_change = 0.005;
  const auto changes = detect_change_points(series, half_percent);
  ASSERT_EQ(changes.size(), 1u) << "the step is real: only the minimum effect hides it";
  EXPECT_EQ(changes[0].index, 6u);
}

TEST(HistoryChangePoints, TwoStepsAreBothFound) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const auto changes = detect_change_points(noisy(steps({{6, 100}, {6, 85}, {6, 100}}), seed));
    ASSERT_EQ(changes.size(), 2u) << "seed " << seed;
    EXPECT_EQ(changes[0].index, 6u);
    EXPECT_LT(changes[0].relative_change, 0);
    EXPECT_EQ(changes[1].index, 12u);
    EXPECT_GT(changes[1].relative_change, 0);
    EXPECT_NEAR(changes[1].before_level, 85, 3) << "levels are of the final segments";
  }
}

TEST(HistoryChangePoints, OneWildRepetitionIsNotAChange) {
  Series series = noisy(steps({{10, 100}}), 5);
  series[7][2] = 400;  // one repetition disturbed by something else on the host
  EXPECT_TRUE(detect_change_points(series).empty());
}

TEST(HistoryChangePoints, PointsWithoutSamplesAreSkippedAndIndicesKept) {
  Series series = noisy(steps({{6, 100}, {7, 85}}), 11);
  series[6].clear();  // the first build after the change failed
  series[2].clear();
  const auto changes = detect_change_points(series);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].index, 7u) << "the first measured point after the change";
}

TEST(HistoryChangePoints, TooLittleDataGivesNoChange) {
  EXPECT_TRUE(detect_change_points(Series{}).empty());
  EXPECT_TRUE(detect_change_points(Series{{100, 101, 99}}).empty());
  // One repetition per build: 2 builds can never be significant, whatever the step.
  EXPECT_TRUE(detect_change_points(Series{{100}, {50}}).empty());
}

TEST(HistoryChangePoints, SameSeriesSameAnswer) {
  const Series series = noisy(steps({{4, 100}, {4, 95}, {4, 90}}), 21, 0.01);
  const auto a = detect_change_points(series);
  const auto b = detect_change_points(series);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, b[i].index);
    EXPECT_EQ(a[i].p_value, b[i].p_value);
  }
}

}  // namespace
}  // namespace infertune
