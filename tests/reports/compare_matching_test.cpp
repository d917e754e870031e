// Matching and comparing sides (reports/compare/comparison.h, store_side.h): configurations are matched by
// key, a configuration missing on one side is named and not compared, a failed candidate is a FAIL, the
// geometric mean and the overall verdict; and sides read from stores.
#include <gtest/gtest.h>

#include <cmath>

#include "compare_test_stores.h"
#include "reports/compare/comparison.h"
#include "reports/compare/noise_thresholds.h"
#include "reports/compare/store_side.h"
#include "test_support.h"

namespace infertune {
namespace {

MeasuredConfiguration configuration(const std::string& key, std::vector<double> tg) {
  MeasuredConfiguration c;
  c.key = key;
  c.label = "label " + key;
  for (double v : tg) c.groups["tg_tps"].push_back({v});
  return c;
}

CompareSettings settings(CompareDesign design = CompareDesign::independent) {
  CompareSettings s;
  s.design = design;
  s.metrics = default_compare_metrics();
  s.resamples = 2000;
  return s;
}

TEST(CompareMatching, UnmatchedConfigurationsAreNamedNotCompared) {
  MeasuredSide base, cand;
  base.configurations = {configuration("a", test::noisy(100, 12, 1)), configuration("only-base", test::noisy(50, 12, 2))};
  cand.configurations = {configuration("only-cand", test::noisy(50, 12, 3)), configuration("a", test::noisy(100, 12, 4))};
  const ComparisonReport r = compare_sides(base, cand, settings());
  ASSERT_EQ(r.comparisons.size(), 1u);
  EXPECT_EQ(r.comparisons[0].key, "a");
  ASSERT_EQ(r.unmatched.size(), 2u);
  EXPECT_EQ(r.unmatched[0].label, "label only-base");
  EXPECT_EQ(r.unmatched[0].reason, "only in the baseline");
  EXPECT_EQ(r.unmatched[1].label, "label only-cand");
  EXPECT_EQ(r.unmatched[1].reason, "only in the candidate");
  EXPECT_EQ(r.verdict, Verdict::pass);
}

TEST(CompareMatching, SlowerCandidateFailsAndTheGeometricMeanFollows) {
  MeasuredSide base, cand;
  base.configurations = {configuration("a", test::noisy(100, 12, 1)), configuration("b", test::noisy(40, 12, 2))};
  cand.configurations = {configuration("a", test::noisy(80, 12, 3)), configuration("b", test::noisy(32, 12, 4))};
  const ComparisonReport r = compare_sides(base, cand, settings());
  ASSERT_EQ(r.comparisons.size(), 2u);
  for (const MetricComparison& c : r.comparisons) {
    EXPECT_EQ(c.verdict, Verdict::fail) << c.key;
    ASSERT_TRUE(c.ratio_interval);
    EXPECT_LT(c.ratio_interval->low, 0.8 * 1.02);
    EXPECT_GT(c.ratio_interval->high, 0.8 * 0.98);
  }
  ASSERT_EQ(r.geometric_means.size(), 1u);
  EXPECT_NEAR(r.geometric_means[0].ratio, 0.8, 0.02);
  EXPECT_EQ(r.geometric_means[0].configurations, 2u);
  EXPECT_EQ(r.geometric_means[0].verdict, Verdict::fail);
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_EQ(exit_status_of(r.verdict), 2);
}

TEST(CompareMatching, FailedCandidateIsAFailAndFailedBaselineIsNotCompared) {
  MeasuredSide base, cand;
  MeasuredConfiguration crashed = configuration("a", {});
  crashed.ok = false;
  crashed.failure = "failed: killed by signal 11";
  base.configurations = {configuration("a", test::noisy(100, 8, 1)), configuration("b", {})};
  base.configurations[1].ok = false;
  base.configurations[1].failure = "oom";
  cand.configurations = {crashed, configuration("b", test::noisy(100, 8, 2))};
  const ComparisonReport r = compare_sides(base, cand, settings());
  ASSERT_EQ(r.comparisons.size(), 1u);
  EXPECT_EQ(r.comparisons[0].verdict, Verdict::fail);
  EXPECT_NE(r.comparisons[0].note.find("signal 11"), std::string::npos);
  ASSERT_EQ(r.unmatched.size(), 1u);
  EXPECT_NE(r.unmatched[0].reason.find("failed in the baseline"), std::string::npos);
}

TEST(CompareMatching, OneRepetitionIsInconclusive) {
  MeasuredSide base, cand;
  base.configurations = {configuration("a", {100})};
  cand.configurations = {configuration("a", {50})};
  const ComparisonReport r = compare_sides(base, cand, settings());
  ASSERT_EQ(r.comparisons.size(), 1u);
  EXPECT_EQ(r.comparisons[0].verdict, Verdict::inconclusive);
  EXPECT_FALSE(r.comparisons[0].note.empty());
  EXPECT_EQ(r.verdict, Verdict::inconclusive);
}

TEST(CompareMatching, PairedBlocksCancelADriftThePooledSidesWouldShow) {
  MeasuredSide base, cand;
  MeasuredConfiguration b = configuration("a", {}), c = configuration("a", {});
  for (int i = 0; i < 8; ++i) {
    const double machine = 100 * (1 - 0.04 * i);  // the machine loses 4% per block pair
    b.groups["tg_tps"].push_back(test::noisy(machine, 5, 10 + i, 0.002));
    c.groups["tg_tps"].push_back(test::noisy(machine * 0.97, 5, 50 + i, 0.002));
  }
  base.configurations = {b};
  cand.configurations = {c};
  const ComparisonReport r = compare_sides(base, cand, settings(CompareDesign::paired_blocks));
  ASSERT_EQ(r.comparisons.size(), 1u);
  const MetricComparison& row = r.comparisons[0];
  ASSERT_TRUE(row.ratio_interval);
  EXPECT_NEAR(*row.ratio, 0.97, 0.003);
  EXPECT_LT(row.ratio_interval->high - row.ratio_interval->low, 0.01);  // the 28% drift is gone
  EXPECT_EQ(row.verdict, Verdict::warn);                                 // 3% slower, sure, within 5%
  EXPECT_EQ(row.test, "Wilcoxon signed-rank");
}

TEST(CompareStoreSide, SelectionParsesSweepSuffix) {
  EXPECT_EQ(parse_store_selection("runs.db:7").sweep, 7);
  EXPECT_EQ(parse_store_selection("runs.db:7").path, "runs.db");
  EXPECT_FALSE(parse_store_selection("runs.db").sweep);
  EXPECT_FALSE(parse_store_selection("a:b.db").sweep);
}

TEST(CompareStoreSide, ReadsTrialsByConfigurationKeyWithoutWarmups) {
  const auto dir = test::temp_dir();
  {
    auto store = ResultsStore::open(dir / "runs.db");
    ASSERT_TRUE(store);
    test::add_sweep(*store, {{test::tg_config(1), {10, 11, 12}}});
    test::add_sweep(*store, {{test::tg_config(1, "/elsewhere/m.gguf"), {20, 21, 22}},
                             {test::tg_config(2), {}, TrialStatus::timeout, "timeout after 30 s"}});
  }
  auto first = load_store_side({dir / "runs.db", 1}, "baseline");
  ASSERT_TRUE(first) << first.error().message;
  auto latest = load_store_side({dir / "runs.db", std::nullopt}, "candidate");
  ASSERT_TRUE(latest) << latest.error().message;
  ASSERT_EQ(first->configurations.size(), 1u);
  ASSERT_EQ(latest->configurations.size(), 2u);
  // The same model content at another path is the same configuration.
  EXPECT_EQ(first->configurations[0].key, latest->configurations[0].key);
  EXPECT_EQ(first->configurations[0].groups.at("tg_tps"), (std::vector<std::vector<double>>{{10}, {11}, {12}}));
  EXPECT_FALSE(latest->configurations[1].ok);
  EXPECT_NE(latest->configurations[1].failure.find("timeout after 30 s"), std::string::npos);
  EXPECT_NE(first->description.find("sweep 1"), std::string::npos);
  auto missing = load_store_side({dir / "runs.db", 9}, "baseline");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("no sweep 9"), std::string::npos);
}

TEST(CompareNoise, ThresholdsFromAaRuns) {
  EXPECT_DOUBLE_EQ(threshold_from_aa_ratios({1.0, 1.0}, 0.01), 0.01);
  EXPECT_NEAR(threshold_from_aa_ratios({0.97, 1.02, 1.01}, 0.01), 0.029, 1e-9);  // type 7 over .01 .02 .03
  const auto dir = test::temp_dir();
  {
    auto store = ResultsStore::open(dir / "aa.db");
    ASSERT_TRUE(store);
    // Two runs of one spec and build: the ratios are 0.97 and 1.02.
    test::add_sweep(*store, {{test::tg_config(1), {100, 100, 100}}, {test::tg_config(2), {50, 50, 50}}});
    test::add_sweep(*store, {{test::tg_config(1), {97, 97, 97}}, {test::tg_config(2), {51, 51, 51}}});
    // Another spec: a single sweep is no A/A run.
    test::add_sweep(*store, {{test::tg_config(4), {10, 10, 10}}}, "spec-other");
  }
  auto noise = noise_thresholds_from_store(dir / "aa.db", 0.01);
  ASSERT_TRUE(noise) << noise.error().message;
  ASSERT_TRUE(noise->by_metric.contains("tg_tps"));
  EXPECT_NEAR(noise->by_metric.at("tg_tps"), 0.0295, 1e-9);  // type 7: 0.02 + 0.95 * (0.03 - 0.02)
  EXPECT_EQ(noise->ratio_count.at("tg_tps"), 2u);
  {
    auto store = ResultsStore::open(dir / "single.db");
    ASSERT_TRUE(store);
    test::add_sweep(*store, {{test::tg_config(1), {100, 100}}});
  }
  auto none = noise_thresholds_from_store(dir / "single.db", 0.01);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no A/A runs"), std::string::npos);
}

}  // namespace
}  // namespace infertune
