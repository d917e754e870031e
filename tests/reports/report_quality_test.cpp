// The HTML report's speed-against-quality section: each variant's throughput against its perplexity increase
// over the base, and for a synthetic base the reason there are no figures.
#include <gtest/gtest.h>

#include "../sweeps/quality_test_data.h"
#include "reports/report/html_report.h"
#include "reports/report/report_charts.h"
#include "reports/report/report_data.h"

namespace infertune {
namespace {

TEST(ReportQuality, ChartsEachVariantsSpeedAgainstItsQuality) {
  const test::QualitySweep s = test::make_quality_sweep(false);
  auto sweeps = load_report_sweeps(s.path, {});
  ASSERT_TRUE(sweeps) << sweeps.error().message;
  const std::vector<FigureChart> charts = quality_charts(*sweeps);
  ASSERT_EQ(charts.size(), 1u);
  ASSERT_EQ(charts[0].chart.series.size(), 1u);
  ASSERT_EQ(charts[0].chart.series[0].points.size(), 2u);
  const std::string html = html_report({*sweeps, "", "2026-12-03T08:00:00Z"});
  EXPECT_NE(html.find("id=\"quality\""), std::string::npos);
  EXPECT_NE(html.find("Throughput against quality loss"), std::string::npos);
  EXPECT_NE(html.find("perplexity increase over the base model"), std::string::npos);
}

TEST(ReportQuality, ASyntheticBaseHasNoChartAndTheReasonIsShown) {
  const test::QualitySweep s = test::make_quality_sweep(true);
  auto sweeps = load_report_sweeps(s.path, {});
  ASSERT_TRUE(sweeps) << sweeps.error().message;
  EXPECT_TRUE(quality_charts(*sweeps).empty());
  const std::string html = html_report({*sweeps, "", "2026-12-03T08:00:00Z"});
  EXPECT_EQ(html.find("Throughput against quality loss"), std::string::npos);
  EXPECT_NE(html.find("random weights"), std::string::npos);
}

}  // namespace
}  // namespace infertune
