// The stopping rule of a trial's repetitions: min_reps first, then the 95% CI of the mean within ci_target
// of it, else max_reps. Pure: series of values, no model.
#include <gtest/gtest.h>

#include <vector>

#include "sweeps/store/statistics.h"
#include "sweeps/trial/repetition_control.h"

namespace infertune {
namespace {

// Feeds `series` one value at a time and returns how many values were taken when the rule stopped.
std::pair<size_t, RepetitionDecision> run_until_stop(const std::vector<double>& series, const RepetitionRule& rule) {
  std::vector<double> seen;
  for (double v : series) {
    seen.push_back(v);
    const RepetitionDecision d = next_repetition(seen, rule);
    if (d != RepetitionDecision::Continue) return {seen.size(), d};
  }
  return {seen.size(), RepetitionDecision::Continue};
}

TEST(TrialRepetition, StopsAtMinRepsWhenTheSpreadIsTiny) {
  const std::vector<double> steady{100.0, 100.1, 99.9, 100.0, 100.05, 99.95, 100.0, 100.0, 100.0, 100.0};
  const auto [n, decision] = run_until_stop(steady, {.min_reps = 3, .max_reps = 10, .ci_target = 0.03});
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(decision, RepetitionDecision::CiTargetMet);
}

TEST(TrialRepetition, RunsToMaxRepsOnANoisySeries) {
  const std::vector<double> noisy{50, 150, 60, 140, 55, 145, 70, 130, 40, 160, 100, 100};
  const auto [n, decision] = run_until_stop(noisy, {.min_reps = 3, .max_reps = 8, .ci_target = 0.03});
  EXPECT_EQ(n, 8u);
  EXPECT_EQ(decision, RepetitionDecision::MaxReps);
}

TEST(TrialRepetition, NeverStopsBelowMinRepsEvenWhenIdentical) {
  const std::vector<double> identical(10, 42.0);
  const auto [n, decision] = run_until_stop(identical, {.min_reps = 5, .max_reps = 10, .ci_target = 0.03});
  EXPECT_EQ(n, 5u);
  EXPECT_EQ(decision, RepetitionDecision::CiTargetMet);
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(next_repetition(std::vector<double>(k, 42.0), {.min_reps = 5, .max_reps = 10, .ci_target = 0.03}),
              RepetitionDecision::Continue)
        << k << " values";
  }
}

TEST(TrialRepetition, StopsWhenTheIntervalNarrowsPastMinReps) {
  // Noisy at first, then steady: the CI shrinks with n and the rule stops between min and max.
  std::vector<double> series{90, 110};
  for (int i = 0; i < 30; ++i) series.push_back(100);
  const RepetitionRule rule{.min_reps = 2, .max_reps = 30, .ci_target = 0.03};
  const auto [n, decision] = run_until_stop(series, rule);
  EXPECT_EQ(decision, RepetitionDecision::CiTargetMet);
  EXPECT_GT(n, 2u);
  EXPECT_LT(n, 30u);
  // It stopped at the first n whose interval is within the target, checked against statistics.h.
  const std::vector<double> taken(series.begin(), series.begin() + long(n));
  const std::vector<double> before(series.begin(), series.begin() + long(n) - 1);
  EXPECT_LE(*ci95_half_width(n, sample_stddev(taken)), 0.03 * mean(taken));
  EXPECT_GT(*ci95_half_width(n - 1, sample_stddev(before)), 0.03 * mean(before));
}

TEST(TrialRepetition, MaxBelowMinMeansMin) {
  const std::vector<double> noisy{1, 100, 1, 100, 1, 100};
  const auto [n, decision] = run_until_stop(noisy, {.min_reps = 4, .max_reps = 2, .ci_target = 0.03});
  EXPECT_EQ(n, 4u);
  EXPECT_EQ(decision, RepetitionDecision::MaxReps);
}

TEST(TrialRepetition, CiWithinTargetNeedsTwoValuesAndANonZeroMean) {
  EXPECT_FALSE(ci_within_target(std::vector<double>{5.0}, 0.5));
  EXPECT_FALSE(ci_within_target(std::vector<double>{0.0, 0.0, 0.0}, 0.5));
  EXPECT_TRUE(ci_within_target(std::vector<double>{7.0, 7.0}, 0.0));
  // n = 2: t(0.975, 1) = 12.706, stddev of {9, 11} = 1.414, half-width = 12.706 x 1.414 / 1.414 = 12.7.
  EXPECT_TRUE(ci_within_target(std::vector<double>{9.0, 11.0}, 1.28));
  EXPECT_FALSE(ci_within_target(std::vector<double>{9.0, 11.0}, 1.26));
}

}  // namespace
}  // namespace infertune
