// Summary statistics and Student t quantiles against values computed by hand (and printed t tables).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sweeps/store/statistics.h"
#include "sweeps/store/student_t.h"

namespace infertune {
namespace {

TEST(StudentT, QuantilesMatchPrintedTables) {
  // Two-sided 95% critical values, t_{0.975, df}, from standard tables (10 significant digits).
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.70620474, 1e-7);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.302652730, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.776445105, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 7), 2.364624252, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.262157163, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042272456, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.995, 10), 3.169272673, 1e-8);
  EXPECT_NEAR(student_t_quantile(0.95, 5), 2.015048373, 1e-8);
  // Many degrees of freedom approach the normal quantile.
  EXPECT_NEAR(student_t_quantile(0.975, 1e7), 1.959963985, 1e-6);
}

TEST(StudentT, ClosedFormsForOneAndTwoDegrees) {
  const double pi = std::acos(-1.0);
  for (double p : {0.6, 0.75, 0.9, 0.99}) {
    // df = 1 is the Cauchy distribution; df = 2 has t = (2p - 1) / sqrt(2 p (1 - p)).
    EXPECT_NEAR(student_t_quantile(p, 1), std::tan(pi * (p - 0.5)), 1e-9) << p;
    EXPECT_NEAR(student_t_quantile(p, 2), (2 * p - 1) / std::sqrt(2 * p * (1 - p)), 1e-9) << p;
  }
}

TEST(StudentT, CdfIsSymmetricAndInvertsTheQuantile) {
  EXPECT_DOUBLE_EQ(student_t_cdf(0, 3), 0.5);
  EXPECT_NEAR(student_t_cdf(-1.5, 6) + student_t_cdf(1.5, 6), 1.0, 1e-14);
  for (double df : {1.0, 3.0, 12.0, 100.0}) {
    EXPECT_NEAR(student_t_cdf(student_t_quantile(0.9, df), df), 0.9, 1e-12) << df;
  }
  EXPECT_LT(student_t_quantile(0.025, 4), 0);
  EXPECT_NEAR(student_t_quantile(0.025, 4), -2.776445105, 1e-8);
  EXPECT_TRUE(std::isnan(student_t_quantile(1.0, 4)));
  EXPECT_TRUE(std::isnan(student_t_quantile(0.5, 0)));
}

TEST(Statistics, SummaryOfEightValuesByHand) {
  // Sorted: 2 4 4 4 5 5 7 9. Mean 40 / 8 = 5; squared deviations 9+1+1+1+0+0+4+16 = 32, variance 32 / 7.
  const std::vector<double> values = {5, 2, 9, 4, 4, 7, 4, 5};
  auto s = summarize(values);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->n, 8u);
  EXPECT_DOUBLE_EQ(s->mean, 5.0);
  ASSERT_TRUE(s->stddev);
  EXPECT_NEAR(*s->stddev, std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_DOUBLE_EQ(s->median, 4.5);  // (4 + 5) / 2
  EXPECT_DOUBLE_EQ(s->p50, 4.5);
  EXPECT_NEAR(s->p95, 8.3, 1e-12);   // rank 7 * 0.95 = 6.65: 7 + 0.65 * (9 - 7)
  EXPECT_NEAR(s->p99, 8.86, 1e-12);  // rank 6.93: 7 + 0.93 * 2
  ASSERT_TRUE(s->ci95_half_width);
  EXPECT_NEAR(*s->ci95_half_width, 2.364624252 * std::sqrt(32.0 / 7.0) / std::sqrt(8.0), 1e-8);  // 1.78750
}

TEST(Statistics, ThreeRepetitions) {
  // 100, 110, 120: mean 110, stddev 10, CI half-width t_{0.975,2} * 10 / sqrt(3) = 24.8413.
  auto s = summarize(std::vector<double>{120, 100, 110});
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->mean, 110);
  EXPECT_DOUBLE_EQ(*s->stddev, 10);
  EXPECT_DOUBLE_EQ(s->median, 110);
  EXPECT_NEAR(s->p95, 119, 1e-12);  // rank 1.9: 110 + 0.9 * 10
  EXPECT_NEAR(*s->ci95_half_width, 24.84138, 1e-5);
}

TEST(Statistics, OneValueHasNoSpread) {
  auto s = summarize(std::vector<double>{42});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->n, 1u);
  EXPECT_EQ(s->mean, 42);
  EXPECT_EQ(s->median, 42);
  EXPECT_EQ(s->p99, 42);
  EXPECT_FALSE(s->stddev);
  EXPECT_FALSE(s->ci95_half_width);
}

TEST(Statistics, PercentilesInterpolateBetweenRanks) {
  const std::vector<double> sorted = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 0), 10);
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 1), 40);
  EXPECT_DOUBLE_EQ(percentile_of_sorted(sorted, 0.5), 25);    // rank 1.5
  EXPECT_NEAR(percentile_of_sorted(sorted, 0.9), 37, 1e-12);  // rank 2.7
}

TEST(Statistics, EmptyOrNonFiniteInputIsAnError) {
  auto empty = summarize(std::vector<double>{});
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("no samples"), std::string::npos);
  auto nan = summarize(std::vector<double>{1, std::nan(""), 3});
  ASSERT_FALSE(nan);
  EXPECT_NE(nan.error().message.find("sample 1"), std::string::npos) << nan.error().message;
  EXPECT_FALSE(summarize(std::vector<double>{1, INFINITY}));
}

TEST(Statistics, StddevKeepsPrecisionForLargeCloseValues) {
  // A one-pass sum-of-squares formula loses every digit here.
  auto s = summarize(std::vector<double>{1e9 + 1, 1e9 + 2, 1e9 + 3});
  ASSERT_TRUE(s);
  EXPECT_NEAR(*s->stddev, 1.0, 1e-6);
}

}  // namespace
}  // namespace infertune
