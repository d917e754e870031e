// The verdict rules of `infertune compare` (reports/compare/verdict.h) as a table, and their exit statuses.
#include <gtest/gtest.h>

#include "reports/compare/verdict.h"

namespace infertune {
namespace {

struct Case {
  double low, high;  // ratio interval, candidate / baseline
  bool higher_is_better;
  std::optional<double> p;
  Verdict expected;
};

TEST(CompareVerdict, Table) {
  const Case cases[] = {
      // throughput (higher is better), threshold 5%: the bound is a ratio of 0.95
      {0.80, 0.85, true, 0.001, Verdict::fail},          // wholly beyond the threshold, significant
      {0.80, 0.85, true, 0.20, Verdict::inconclusive},   // beyond, but the rank test disagrees
      {0.80, 0.85, true, std::nullopt, Verdict::fail},   // no test (a geometric mean): the interval decides
      {0.93, 0.99, true, 0.001, Verdict::inconclusive},  // straddles 0.95
      {0.96, 0.985, true, 0.001, Verdict::warn},         // slower with confidence, within the threshold
      {0.96, 0.985, true, 0.30, Verdict::pass},          // ... but not significant
      {0.985, 0.995, true, 0.001, Verdict::pass},        // slower with confidence, but by less than 1%
      {0.97, 1.02, true, 0.50, Verdict::pass},           // includes 1
      {1.10, 1.20, true, 0.001, Verdict::pass},          // faster
      {0.95, 1.00, true, 0.50, Verdict::pass},           // exactly at the bound is within it
      // latency (lower is better): the bound is a ratio of 1.05
      {1.15, 1.25, false, 0.001, Verdict::fail},
      {1.015, 1.04, false, 0.001, Verdict::warn},
      {1.02, 1.08, false, 0.001, Verdict::inconclusive},
      {0.80, 0.90, false, 0.001, Verdict::pass},
  };
  for (const Case& c : cases) {
    const Verdict v = decide_verdict({.ratio_interval = Interval{c.low, c.high},
                                      .higher_is_better = c.higher_is_better,
                                      .threshold = 0.05,
                                      .p_value = c.p});
    EXPECT_EQ(verdict_name(v), verdict_name(c.expected))
        << "[" << c.low << ", " << c.high << "] higher_is_better=" << c.higher_is_better;
  }
}

TEST(CompareVerdict, NoIntervalIsInconclusive) {
  VerdictInput input;
  input.ratio_interval = std::nullopt;
  EXPECT_EQ(decide_verdict(input), Verdict::inconclusive);
}

TEST(CompareVerdict, ExitStatusesAndPrecedence) {
  EXPECT_EQ(exit_status_of(Verdict::pass), 0);
  EXPECT_EQ(exit_status_of(Verdict::warn), 1);
  EXPECT_EQ(exit_status_of(Verdict::fail), 2);
  EXPECT_EQ(exit_status_of(Verdict::inconclusive), 3);
  EXPECT_EQ(kCompareErrorExitStatus, 4);
  EXPECT_EQ(most_severe(Verdict::warn, Verdict::inconclusive), Verdict::inconclusive);
  EXPECT_EQ(most_severe(Verdict::fail, Verdict::inconclusive), Verdict::fail);
  EXPECT_EQ(most_severe(Verdict::pass, Verdict::warn), Verdict::warn);
}

TEST(CompareVerdict, WorseningIsUniform) {
  EXPECT_NEAR(worsening_of(0.8, true), 0.2, 1e-12);
  EXPECT_NEAR(worsening_of(1.2, false), 0.2, 1e-12);
  EXPECT_LT(worsening_of(1.1, true), 0);
}

}  // namespace
}  // namespace infertune
