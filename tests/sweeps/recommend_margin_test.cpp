// The margin over the runner-up and the noise rule (overlapping 95% intervals), on constructed cases and
// end to end through the store's Student t intervals.
#include <gtest/gtest.h>

#include "recommend_test_data.h"
#include "sweeps/recommend/noise_margin.h"
#include "test_support.h"

namespace infertune {
namespace {

using namespace test;

TEST(RecommendMargin, OutsideNoiseWhenIntervalsAreApart) {
  const Margin m = compute_margin({107.3, 1.0}, {100.0, 1.0}, true);
  EXPECT_NEAR(m.percent, 7.3, 1e-9);
  ASSERT_TRUE(m.within_noise);
  EXPECT_FALSE(*m.within_noise);
  EXPECT_EQ(m.text(), "margin 7.3% (outside noise)");
}

TEST(RecommendMargin, WithinNoiseWhenIntervalsOverlap) {
  const Margin m = compute_margin({101.2, 101.2 * 0.021}, {100.0, 1.8}, true);
  EXPECT_NEAR(m.percent, 1.2, 1e-9);
  ASSERT_TRUE(m.within_noise);
  EXPECT_TRUE(*m.within_noise);
  EXPECT_EQ(m.text(), "margin 1.2% (within noise: ±2.1% / ±1.8%)");
}

TEST(RecommendMargin, BoundaryAndLowerIsBetter) {
  // Latency: the winner is lower; 100 vs 110 is a 10% margin. Intervals [97, 103] and [103, 117] touch.
  const Margin touching = compute_margin({100, 3}, {110, 7}, false);
  EXPECT_NEAR(touching.percent, 10.0, 1e-9);
  EXPECT_TRUE(touching.within_noise.value());
  const Margin apart = compute_margin({100, 2.9}, {110, 7}, false);
  EXPECT_FALSE(apart.within_noise.value());
}

TEST(RecommendMargin, UnknownWithoutAnInterval) {
  const Margin m = compute_margin({110, std::nullopt}, {100, 1}, true);
  EXPECT_FALSE(m.within_noise.has_value());
  EXPECT_NE(m.text().find("noise unknown"), std::string::npos) << m.text();
}

// Two configurations of tg128, tg_tps around(mean, spread): the store's intervals are kCi3 x spread.
Margin stored_margin(double winner_mean, double winner_spread, double runner_mean, double runner_spread) {
  int64_t sweep = 0;
  auto store = store_with_sweep(temp_dir() / "results.db", sweep);
  record(store, sweep,
         {trial_config(1, 1, single_workload("tg", 0, 128)),
          {{metric::kGenTokensPerSecond, around(runner_mean, runner_spread)}}});
  record(store, sweep,
         {trial_config(2, 1, single_workload("tg", 0, 128)),
          {{metric::kGenTokensPerSecond, around(winner_mean, winner_spread)}}});
  auto r = recommend_sweep(store, sweep, no_store_options());
  EXPECT_TRUE(r);
  const auto& throughput = r->scenarios[1];
  EXPECT_EQ(throughput.scenario, Scenario::throughput);
  EXPECT_EQ(throughput.winner, std::optional<size_t>(1));
  EXPECT_TRUE(throughput.margin);
  return throughput.margin.value_or(Margin{});
}

TEST(RecommendMargin, EndToEndFromStoredSamples) {
  // 110 ± 2.484 x 1 and 100 ± 2.484 x 1: gap 10 > 4.97, outside.
  const Margin apart = stored_margin(110, 1, 100, 1);
  EXPECT_NEAR(apart.percent, 10.0, 1e-9);
  EXPECT_FALSE(apart.within_noise.value());
  EXPECT_NEAR(apart.winner_ci_percent.value(), kCi3 * 1 / 110 * 100, 1e-9);
  // 103 ± 2.484 x 2 and 100 ± 2.484 x 2: gap 3 < 9.94, within.
  const Margin close = stored_margin(103, 2, 100, 2);
  EXPECT_TRUE(close.within_noise.value());
  EXPECT_NE(close.text().find("within noise: ±4.8% / ±5.0%"), std::string::npos) << close.text();
}

}  // namespace
}  // namespace infertune
