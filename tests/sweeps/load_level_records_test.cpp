// loadgen's levels recorded as a sweep (`loadgen --db`): one trial per level with the endpoint, model and load in
// its config; per request ttft/itl/e2e and per level aggregate_tps, request_rps and goodput_rps as samples; a level
// whose every request failed is a failed trial with the error; the sweep is done and its spec names the options.
#include <gtest/gtest.h>

#include <chrono>
#include <map>

#include "store_test_data.h"
#include "sweeps/run/load_level_records.h"
#include "sweeps/store/metric_names.h"
#include "test_support.h"

namespace infertune {
namespace {

using std::chrono::milliseconds;

// A request that took ttft_ms to its first token, then gaps of gap_ms for `tokens` tokens.
RequestOutcome request(double ttft_ms, double gap_ms, int tokens) {
  RequestOutcome r;
  r.ok = true;
  r.start = std::chrono::steady_clock::time_point{};
  r.ttft_s = ttft_ms / 1000;
  for (int i = 1; i < tokens; ++i) r.chunk_gaps_s.push_back(gap_ms / 1000);
  r.end = r.start + std::chrono::microseconds(static_cast<int64_t>(1000 * (ttft_ms + gap_ms * (tokens - 1))));
  r.output_tokens = static_cast<uint64_t>(tokens);
  return r;
}

LevelRun level(LoadLevel::Kind kind, uint32_t clients, double rate, std::vector<RequestOutcome> outcomes) {
  LevelRun run;
  run.level = {.kind = kind, .concurrency = clients, .rate = rate, .index = 0};
  run.outcomes = std::move(outcomes);
  run.wall_s = 2.0;
  return run;
}

TEST(LoadLevelRecords, EachLevelIsATrialWithItsRequestsAsSamples) {
  int64_t ignored = 0;
  ResultsStore store = test::store_with_sweep(test::temp_dir() / "results.db", ignored);
  auto host = store.upsert_host(test::test_host());
  auto build = store.upsert_build(test::test_build());
  ASSERT_TRUE(host && build);

  LoadOptions o;
  o.url = "http://127.0.0.1:9999";
  o.model = "served";
  o.prompt_tokens = {90, 90};
  o.max_tokens = 4;
  o.slo_ttft_s = 0.2;
  o.concurrency = {2};
  o.rates = {1.5};
  std::vector<LevelRun> runs{
      level(LoadLevel::Kind::closed, 2, 0, {request(100, 10, 4), request(300, 20, 4)}),
      level(LoadLevel::Kind::open, 0, 1.5, {}),
  };
  RequestOutcome failed;
  failed.error = "503: queue full";
  runs[1].outcomes.push_back(failed);
  std::vector<LevelSummary> summaries{summarize(runs[0], o), summarize(runs[1], o)};
  ASSERT_EQ(summaries[1].errors, summaries[1].requests);

  auto sweep = record_load_levels(store, *host, *build, o, runs, summaries);
  ASSERT_TRUE(sweep) << sweep.error().message;
  auto stored = store.find_sweep(*sweep);
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ((*stored)->status, SweepStatus::done);
  EXPECT_NE((*stored)->spec.find("http://127.0.0.1:9999"), std::string::npos) << (*stored)->spec;

  auto trials = store.trials(*sweep);
  ASSERT_TRUE(trials) << trials.error().message;
  ASSERT_EQ(trials->size(), 2u);
  const StoredTrial& closed = (*trials)[0];
  EXPECT_EQ(closed.trial.status, TrialStatus::ok);
  const auto config = nlohmann::json::parse(closed.trial.config_json);
  EXPECT_EQ(config["endpoint"], "http://127.0.0.1:9999");
  EXPECT_EQ(config["model"], "served");
  EXPECT_EQ(config["workload"]["kind"], "serve");
  EXPECT_EQ(config["workload"]["clients"], 2);
  EXPECT_EQ(config["workload"]["n_gen"], 4);
  EXPECT_EQ(config["workload"]["slo_ttft_ms"], 200.0);

  auto samples = store.samples(closed.id);
  ASSERT_TRUE(samples) << samples.error().message;
  std::map<std::string, std::vector<double>> by_metric;
  for (const Sample& s : *samples) by_metric[s.metric].push_back(s.value);
  EXPECT_EQ(by_metric[metric::kTimeToFirstTokenMs], (std::vector<double>{100, 300}));
  EXPECT_EQ(by_metric[metric::kInterTokenLatencyMs].size(), 6u);
  ASSERT_EQ(by_metric[metric::kEndToEndLatencyMs].size(), 2u);
  EXPECT_NEAR(by_metric[metric::kEndToEndLatencyMs][1], 360, 1e-6);
  // 2 requests in 2 s; only the first met the 200 ms TTFT objective; 8 tokens in 2 s.
  EXPECT_EQ(by_metric[metric::kRequestsPerSecond], (std::vector<double>{1.0}));
  EXPECT_EQ(by_metric[metric::kGoodputPerSecond], (std::vector<double>{0.5}));
  EXPECT_EQ(by_metric[metric::kAggregateTokensPerSecond], (std::vector<double>{4.0}));

  const StoredTrial& open = (*trials)[1];
  EXPECT_EQ(open.trial.status, TrialStatus::failed);
  EXPECT_NE(open.trial.reason.find("queue full"), std::string::npos) << open.trial.reason;
  EXPECT_EQ(nlohmann::json::parse(open.trial.config_json)["workload"]["rate"], 1.5);
}

TEST(LoadLevelRecords, MismatchedRunsAndSummariesAreAnError) {
  int64_t sweep = 0;
  ResultsStore store = test::store_with_sweep(test::temp_dir() / "results.db", sweep);
  auto r = record_load_levels(store, 1, 1, LoadOptions{}, {LevelRun{}}, {});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("1 levels run but 0 summarized"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace infertune
