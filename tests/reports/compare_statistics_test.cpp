// The statistics behind `infertune compare`: rank tests against hand-computed values, the bootstrap
// interval's coverage of a known ratio over many seeds, the paired t interval, the geometric mean, and the
// reproducibility a fixed seed promises.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "reports/compare/compare_statistics.h"

namespace infertune {
namespace {

TEST(CompareStatistics, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median_of(std::vector<double>{5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median_of(std::vector<double>{4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(pooled_median({{1, 2}, {9}, {3, 4}}), 3);
}

// Hand-computed: every candidate above every baseline, U = 9 of 9; the exact null of U for 3 and 3 values
// puts 1 of C(6,3) = 20 arrangements at 9, so p = 2 / 20.
TEST(CompareStatistics, MannWhitneyExactAllAbove) {
  const RankTest t = mann_whitney_u(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6});
  EXPECT_TRUE(t.exact);
  EXPECT_DOUBLE_EQ(t.statistic, 9);
  EXPECT_NEAR(t.p_value, 0.1, 1e-12);
  const RankTest reversed = mann_whitney_u(std::vector<double>{4, 5, 6}, std::vector<double>{1, 2, 3});
  EXPECT_DOUBLE_EQ(reversed.statistic, 0);
  EXPECT_NEAR(reversed.p_value, 0.1, 1e-12);
}

// Interleaved: candidate {2,4,6} over baseline {1,3,5} wins 1 + 2 + 3 = 6 pairs. The null counts of U for
// (3,3) are 1 1 2 3 3 3 3 2 1 1 (u = 0..9), so P(U >= 6) = 7/20 and p = 0.7.
TEST(CompareStatistics, MannWhitneyExactInterleaved) {
  const RankTest t = mann_whitney_u(std::vector<double>{1, 3, 5}, std::vector<double>{2, 4, 6});
  EXPECT_DOUBLE_EQ(t.statistic, 6);
  EXPECT_NEAR(t.p_value, 0.7, 1e-12);
}

// Ties: baseline {1,2,2,3}, candidate {2,3,3,4}. Average ranks give the candidate 3 + 6 + 6 + 8 = 23, so
// U = 23 - 10 = 13 (mean 8). Variance 16/12 * (9 - (24 + 24) / 56) = 10.857; with the continuity correction
// z = 4.5 / 3.2950 = 1.3657, two-sided p = 0.17203.
TEST(CompareStatistics, MannWhitneyNormalWithTies) {
  const RankTest t = mann_whitney_u(std::vector<double>{1, 2, 2, 3}, std::vector<double>{2, 3, 3, 4});
  EXPECT_FALSE(t.exact);
  EXPECT_DOUBLE_EQ(t.statistic, 13);
  EXPECT_NEAR(t.p_value, 0.17203, 1e-5);
}

TEST(CompareStatistics, MannWhitneyLargeSamplesSeparateClearly) {
  std::vector<double> base, cand;
  for (int i = 0; i < 40; ++i) {
    base.push_back(100 + i * 0.1);
    cand.push_back(90 + i * 0.1);
  }
  const RankTest t = mann_whitney_u(base, cand);
  EXPECT_FALSE(t.exact);
  EXPECT_DOUBLE_EQ(t.statistic, 0);
  EXPECT_LT(t.p_value, 1e-10);
}

// d = {1, 2, 3, -4, 5}: W+ = 1 + 2 + 3 + 5 = 11. Subset sums of {1..5} at 11..15 number 2 + 2 + 1 + 1 + 1 = 7
// of 32, so p = 14 / 32.
TEST(CompareStatistics, WilcoxonSignedRankExact) {
  const RankTest t = wilcoxon_signed_rank(std::vector<double>{1, 2, 3, -4, 5});
  EXPECT_TRUE(t.exact);
  EXPECT_DOUBLE_EQ(t.statistic, 11);
  EXPECT_NEAR(t.p_value, 14.0 / 32, 1e-12);
  const RankTest all_positive = wilcoxon_signed_rank(std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5, 0.6});
  EXPECT_NEAR(all_positive.p_value, 2.0 / 64, 1e-12);
  const RankTest zeros_dropped = wilcoxon_signed_rank(std::vector<double>{0, 0, 1, 2, 3, -4, 5});
  EXPECT_NEAR(zeros_dropped.p_value, 14.0 / 32, 1e-12);
  EXPECT_DOUBLE_EQ(wilcoxon_signed_rank(std::vector<double>{0, 0}).p_value, 1);
}

// d = {1..8}: the 36 Walsh averages (i + j) / 2; with 8 differences the exact null puts 5 / 256 <= 0.025 at
// W+ <= 3 and 7 / 256 above it, so C = 4: [w_(4), w_(33)] = [2, 7] (sorted Walsh averages 1, 1.5, 2, 2, 2.5,
// ...), coverage 1 - 10/256. The estimate is their median, 4.5.
TEST(CompareStatistics, SignedRankIntervalExact) {
  auto i = signed_rank_interval(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_TRUE(i);
  EXPECT_DOUBLE_EQ(i->estimate, 4.5);
  EXPECT_DOUBLE_EQ(i->interval.low, 2);
  EXPECT_DOUBLE_EQ(i->interval.high, 7);
  EXPECT_NEAR(i->achieved_confidence, 1 - 10.0 / 256, 1e-12);
  // Five pairs cannot reach 95% (the smallest tail is 1/32); six give [min, max].
  EXPECT_FALSE(signed_rank_interval(std::vector<double>{1, 2, 3, 4, 5}));
  auto six = signed_rank_interval(std::vector<double>{3, 1, 2, 6, 4, 5});
  ASSERT_TRUE(six);
  EXPECT_DOUBLE_EQ(six->interval.low, 1);
  EXPECT_DOUBLE_EQ(six->interval.high, 6);
  // One wild pair does not move the estimate (it widens the interval: 8 of the 36 averages hold it).
  auto wild = signed_rank_interval(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 800});
  ASSERT_TRUE(wild);
  EXPECT_DOUBLE_EQ(wild->estimate, 4.5);
  EXPECT_DOUBLE_EQ(wild->interval.low, 2);
  EXPECT_DOUBLE_EQ(wild->interval.high, 402.5);
}

TEST(CompareStatistics, GeometricMean) {
  EXPECT_NEAR(geometric_mean_of_logs(std::vector<double>{std::log(2.0), std::log(0.5)}), 1, 1e-12);
  EXPECT_NEAR(geometric_mean_of_logs(std::vector<double>{std::log(1.0), std::log(4.0)}), 2, 1e-12);
  EXPECT_NEAR(geometric_mean_of_logs(std::vector<double>{std::log(1.1), std::log(1.1), std::log(1.1)}), 1.1, 1e-12);
}

std::vector<std::vector<double>> lognormal_groups(std::mt19937_64& rng, double mu, double sigma, int n) {
  std::normal_distribution<double> normal(mu, sigma);
  std::vector<std::vector<double>> groups;
  for (int i = 0; i < n; ++i) groups.push_back({std::exp(normal(rng))});
  return groups;
}

// The 95% interval covers the true ratio of the population medians (exp(mu_c - mu_b)) at about the
// nominal rate: 400 data sets of 30 + 30 lognormal values, so the count has a standard deviation of ~4.4.
TEST(CompareStatistics, BootstrapIntervalCoversTheTrueRatioAtTheNominalRate) {
  std::mt19937_64 data_rng(7);
  const double true_log_ratio = std::log(0.9);
  int covered = 0;
  constexpr int kDataSets = 400;
  for (int k = 0; k < kDataSets; ++k) {
    const auto base = lognormal_groups(data_rng, std::log(100.0), 0.05, 30);
    const auto cand = lognormal_groups(data_rng, std::log(100.0) + true_log_ratio, 0.05, 30);
    const BootstrapRatio r = bootstrap_ratio_of_medians(base, cand, 1000, 1000 + k);
    if (r.log_interval.low <= true_log_ratio && true_log_ratio <= r.log_interval.high) ++covered;
  }
  const double coverage = double(covered) / kDataSets;
  EXPECT_GT(coverage, 0.90);
  EXPECT_LT(coverage, 0.985);
}

// The signed-rank interval over block pairs covers a known ratio at its nominal rate too (96.1% for 8 pairs),
// with a drift that moves both sides of a pair alike.
TEST(CompareStatistics, PairedIntervalCoversTheTrueRatioUnderDrift) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(0, 0.02);
  const double true_log_ratio = std::log(1.05);
  int covered = 0;
  constexpr int kDataSets = 400;
  for (int k = 0; k < kDataSets; ++k) {
    std::vector<double> pair_logs;
    for (int i = 0; i < 8; ++i) {
      const double drift = 0.1 * i;  // the machine slows block by block
      pair_logs.push_back((drift + true_log_ratio + noise(rng)) - (drift + noise(rng)));
    }
    auto interval = signed_rank_interval(pair_logs);
    if (interval->interval.low <= true_log_ratio && true_log_ratio <= interval->interval.high) ++covered;
  }
  EXPECT_GT(double(covered) / kDataSets, 0.90);
  EXPECT_LT(double(covered) / kDataSets, 0.995);
}

TEST(CompareStatistics, BootstrapIsReproducibleForASeedAndResamplesGroupsWhole) {
  const std::vector<std::vector<double>> base{{10, 11, 12}, {10.5}, {9.5, 10}};
  const std::vector<std::vector<double>> cand{{12, 13}, {12.5}, {11.5, 12, 12.5}};
  const BootstrapRatio a = bootstrap_ratio_of_medians(base, cand, 500, 42);
  const BootstrapRatio b = bootstrap_ratio_of_medians(base, cand, 500, 42);
  EXPECT_EQ(a.replicate_log_ratios, b.replicate_log_ratios);
  EXPECT_DOUBLE_EQ(a.log_ratio, std::log(12.25 / 10.25));
  EXPECT_LE(a.log_interval.low, a.log_ratio);
  EXPECT_GE(a.log_interval.high, a.log_ratio);
  const BootstrapRatio c = bootstrap_ratio_of_medians(base, cand, 500, 43);
  EXPECT_NE(a.replicate_log_ratios, c.replicate_log_ratios);
  EXPECT_NE(seed_from_text("a", 1), seed_from_text("b", 1));
  EXPECT_EQ(seed_from_text("a", 1), seed_from_text("a", 1));
}

}  // namespace
}  // namespace infertune
