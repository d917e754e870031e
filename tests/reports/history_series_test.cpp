// load_history (reports/history/history_series.h) on stores written with the ResultsStore API: points in
// the sweeps' time order with their builds, raw samples without warmups, failed trials shown, hosts kept
// apart, the same model bytes at another path the same configuration, metrics and filters.
#include <gtest/gtest.h>

#include <set>

#include "history_test_data.h"
#include "reports/history/history_series.h"
#include "test_support.h"

namespace infertune {
namespace {

using namespace test;

ResultsStore regression_store() {
  auto store = ResultsStore::open(temp_dir() / "results.db");
  EXPECT_TRUE(store) << store.error().message;
  write_regression_store(*store);
  return std::move(*store);
}

std::vector<HistorySeries> load(ResultsStore& store, const HistoryQuery& query = {}) {
  auto series = load_history(store, query);
  EXPECT_TRUE(series) << series.error().message;
  return series ? std::move(*series) : std::vector<HistorySeries>{};
}

TEST(HistorySeries, PointsFollowTheSweepsTimeWithTheirBuilds) {
  ResultsStore store = regression_store();
  const auto series = load(store);
  ASSERT_EQ(series.size(), 2u);
  const HistorySeries& t1 = series[0];
  EXPECT_EQ(t1.configuration.label, "test.gguf tg32 -t 1 -tb 1 -c 4096 -b 512 -ub 256");
  EXPECT_EQ(t1.metric, "tg_tps") << "a tg workload's main metric";
  EXPECT_TRUE(t1.higher_is_better);
  EXPECT_EQ(t1.host_fingerprint, kHostA);
  EXPECT_EQ(t1.host_cpu_model, "Host A CPU");
  ASSERT_EQ(t1.points.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(t1.points[i].time, day_time(int(i) + 1));
    EXPECT_EQ(t1.points[i].git_commit.substr(0, 2), "c" + std::to_string(i + 1));
    EXPECT_EQ(t1.points[i].version, "0.1.0");
  }
  const HistoryPoint& first = t1.points[0];
  EXPECT_EQ(first.samples, five_around(20)) << "raw samples in measured order, the warmup left out";
  ASSERT_TRUE(first.measured());
  EXPECT_DOUBLE_EQ(first.summary->median, 20);
  EXPECT_EQ(first.summary->n, 5u);
  ASSERT_TRUE(first.summary->ci95_half_width);
}

TEST(HistorySeries, RegressionIsMarkedAtTheFirstSlowerBuild) {
  ResultsStore store = regression_store();
  const auto series = load(store);
  ASSERT_EQ(series.size(), 2u);
  ASSERT_EQ(series[0].changes.size(), 1u);
  const HistoryChange& c = series[0].changes[0];
  EXPECT_EQ(c.index, 3u);
  EXPECT_EQ(series[0].points[c.index].git_commit.substr(0, 2), "c4");
  EXPECT_EQ(c.direction, ChangeDirection::regression);
  EXPECT_DOUBLE_EQ(c.before_level, 20);
  EXPECT_DOUBLE_EQ(c.after_level, 17);
  EXPECT_NEAR(c.relative_change, -0.15, 1e-12);
  EXPECT_LE(c.p_value, 0.01);
  EXPECT_TRUE(series[1].changes.empty()) << "drift under 1% is not a change";
}

TEST(HistorySeries, FailedTrialsAreShownAsFailedPoints) {
  ResultsStore store = regression_store();
  const auto series = load(store);
  ASSERT_EQ(series.size(), 2u);
  const HistorySeries& t2 = series[1];
  ASSERT_EQ(t2.points.size(), 6u);
  const HistoryPoint& failed = t2.points[4];
  EXPECT_EQ(failed.status, TrialStatus::failed);
  EXPECT_FALSE(failed.measured());
  EXPECT_TRUE(failed.samples.empty());
  EXPECT_NE(failed.reason.find("synthetic failure"), std::string::npos);
}

TEST(HistorySeries, LatencyMetricRisingIsARegression) {
  ResultsStore store = regression_store();
  HistoryQuery query;
  query.metric = "ttft_ms";
  const auto series = load(store, query);
  ASSERT_EQ(series.size(), 1u) << "only -t 1 has ttft samples";
  EXPECT_FALSE(series[0].higher_is_better);
  ASSERT_EQ(series[0].changes.size(), 1u);
  EXPECT_EQ(series[0].changes[0].index, 3u);
  EXPECT_GT(series[0].changes[0].relative_change, 0.15);
  EXPECT_EQ(series[0].changes[0].direction, ChangeDirection::regression);
}

TEST(HistorySeries, HostsAreNeverMixed) {
  ResultsStore store = regression_store();
  // Host B measures "-t 1" much faster, with builds c2 and c5: its own series, its own levels.
  for (int build : {2, 5}) {
    HistorySweep sweep{fmt::format("c{}{}", build, std::string(38, '0')),
                       fmt::format("2025-06-{:02d}T18:00:00.000Z", build), kHostB};
    sweep.trials.push_back({history_tg_config(1), {{metric::kGenTokensPerSecond, five_around(40)}}});
    add_history_sweep(store, sweep);
  }
  const auto series = load(store);
  ASSERT_EQ(series.size(), 3u);
  EXPECT_EQ(series[0].host_fingerprint, kHostA);
  EXPECT_EQ(series[0].points.size(), 6u) << "host B's trials are not in host A's series";
  EXPECT_EQ(series[2].host_fingerprint, kHostB);
  EXPECT_EQ(series[2].host_cpu_model, "Host B CPU");
  ASSERT_EQ(series[2].points.size(), 2u);
  EXPECT_TRUE(series[2].changes.empty());

  HistoryQuery only_b;
  only_b.host_prefix = "bbbb";
  const auto b = load(store, only_b);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].host_fingerprint, kHostB);
}

TEST(HistorySeries, ConfigSubstringFilters) {
  ResultsStore store = regression_store();
  HistoryQuery query;
  query.config_substring = "-t 2 ";
  const auto series = load(store, query);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_NE(series[0].configuration.label.find("-t 2"), std::string::npos);
  query.config_substring = "no such configuration";
  EXPECT_TRUE(load(store, query).empty()) << "nothing matching is an empty history, not an error";
}

TEST(HistorySeries, SameModelBytesAtAnotherPathAreOneConfiguration) {
  auto store = ResultsStore::open(temp_dir() / "results.db");
  ASSERT_TRUE(store);
  for (int day = 1; day <= 4; ++day) {
    const std::string path = day <= 2 ? "/old/cache/m.gguf" : "/new/cache/m.gguf";
    auto model = store->upsert_model({"content-hash-1", path, "llama", 1000, 4096, "{}"});
    ASSERT_TRUE(model);
    HistorySweep sweep{fmt::format("d{}", day), day_time(day)};
    sweep.trials.push_back(
        {history_tg_config(1, path), {{metric::kGenTokensPerSecond, five_around(20)}}, TrialStatus::ok, *model});
    add_history_sweep(*store, sweep);
  }
  const auto series = load(*store);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].points.size(), 4u);
}

TEST(HistorySeries, EachWorkloadFollowsItsMainMetric) {
  auto store = ResultsStore::open(temp_dir() / "results.db");
  ASSERT_TRUE(store);
  HistorySweep sweep{"e1", day_time(1)};
  sweep.trials.push_back({trial_config(2, 1, single_workload("pp", 128, 0)),
                          {{metric::kPromptTokensPerSecond, five_around(300)}, {metric::kTimeToFirstTokenMs, {5}}}});
  sweep.trials.push_back({trial_config(2, 4, batched_workload(4)),
                          {{metric::kAggregateTokensPerSecond, five_around(60)}, {metric::kGenTokensPerSecond, {9}}}});
  add_history_sweep(*store, sweep);
  const auto series = load(*store);
  ASSERT_EQ(series.size(), 2u);
  std::set<std::string> metrics{series[0].metric, series[1].metric};
  EXPECT_EQ(metrics, (std::set<std::string>{"pp_tps", "aggregate_tps"}));

  HistoryQuery itl;
  itl.metric = "itl_ms";
  EXPECT_TRUE(load(*store, itl).empty()) << "no trial has itl samples: no series";
}

}  // namespace
}  // namespace infertune
