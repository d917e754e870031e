// Each scenario picks the configuration a hand computation says; constraints exclude; workloads of one
// configuration are one candidate; empty and failed-only sweeps give a clear message.
#include <gtest/gtest.h>

#include <tuple>

#include "recommend_test_data.h"
#include "sweeps/recommend/candidates.h"
#include "test_support.h"

namespace infertune {
namespace {

using namespace test;

struct Point {
  int np;
  double tps, ttft, itl;
};

// Four configurations of one batched workload pp128+tg64 (63 gaps per reply). By hand, reply time =
// TTFT + 63 x ITL: np1 50 + 630 = 680, np2 60 + 693 = 753, np4 80 + 819 = 899, np8 120 + 1260 = 1380.
// latency (np 1..4): np1. throughput: np8 (90). mixed: limit 1.25 x 680 = 850 admits np1 (20) and np2 (36):
// np2, runner-up np1.
const std::vector<Point> kPoints{{1, 20, 50, 10}, {2, 36, 60, 11}, {4, 60, 80, 13}, {8, 90, 120, 20}};

class RecommendScenarios : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.emplace(store_with_sweep(temp_dir() / "results.db", sweep_));
    for (const Point& p : kPoints) {
      SyntheticTrial t{trial_config(2, p.np, batched_workload(p.np)), batched_metrics(p.tps, p.ttft, p.itl)};
      t.predicted_rss = 1000 * p.np;
      t.measured_rss = 900 * p.np;
      ids_.push_back(record(*store_, sweep_, t));
    }
  }
  RecommendationReport run(const RecommendOptions& options) {
    auto r = recommend_sweep(*store_, sweep_, options);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : RecommendationReport{};
  }
  static const ScenarioRecommendation& scenario(const RecommendationReport& r, Scenario s) {
    for (const auto& x : r.scenarios)
      if (x.scenario == s) return x;
    ADD_FAILURE() << "no scenario " << to_string(s);
    return r.scenarios.front();
  }
  int np_of(const RecommendationReport& r, std::optional<size_t> i) {
    EXPECT_TRUE(i.has_value());
    return i ? r.candidates[*i].n_parallel() : -1;
  }

  std::optional<ResultsStore> store_;
  int64_t sweep_ = 0;
  std::vector<int64_t> ids_;
};

TEST_F(RecommendScenarios, EachScenarioPicksTheHandComputedConfiguration) {
  const auto r = run(no_store_options());
  ASSERT_EQ(r.candidates.size(), 4u);
  const auto& latency = scenario(r, Scenario::latency);
  EXPECT_EQ(np_of(r, latency.winner), 1);
  EXPECT_EQ(np_of(r, latency.runner_up), 2);
  ASSERT_TRUE(latency.winner_score);
  EXPECT_NEAR(latency.winner_score->value, 50 + 63 * 10, 1e-9);
  EXPECT_NEAR(latency.runner_up_score->value, 60 + 63 * 11, 1e-9);
  EXPECT_EQ(latency.trial_id, ids_[0]);

  const auto& throughput = scenario(r, Scenario::throughput);
  EXPECT_EQ(np_of(r, throughput.winner), 8);
  EXPECT_EQ(np_of(r, throughput.runner_up), 4);
  EXPECT_NEAR(throughput.winner_score->value, 90, 1e-9);  // the wild warmup did not count
  EXPECT_EQ(throughput.trial_id, ids_[3]);

  const auto& mixed = scenario(r, Scenario::mixed);
  EXPECT_EQ(np_of(r, mixed.winner), 2);
  EXPECT_EQ(np_of(r, mixed.runner_up), 1);
  EXPECT_NE(mixed.rule.find("850.00 ms"), std::string::npos) << mixed.rule;
}

TEST_F(RecommendScenarios, ServingAppearsOnlyWithServedWorkloads) {
  const auto r = run(no_store_options());
  EXPECT_EQ(r.scenarios.size(), 3u);  // no served workload: latency, throughput, mixed
  for (const auto& s : r.scenarios) EXPECT_NE(s.scenario, Scenario::serving);
}

// Served loads of 1 and 4 clients on three -np values: the serving scenario compares goodput on the 4-client load
// (every configuration measured both: the tie goes to the most clients), and its lines start servers.
TEST(RecommendServing, MostGoodputOnTheHeaviestLoadWins) {
  int64_t sweep = 0;
  ResultsStore store = store_with_sweep(temp_dir() / "results.db", sweep);
  const auto served = [](int clients) {
    return nlohmann::json{{"kind", "serve"}, {"n_prompt", 90},     {"n_gen", 32},          {"depth", 0},
                          {"n_parallel", 1}, {"clients", clients}, {"slo_ttft_ms", 500.0}, {"slo_itl_ms", 0.0}};
  };
  // (np, goodput at 1 client, goodput at 4): np 2 wins at 4 clients, np 1 would at 1.
  for (auto [np, one, four] : {std::tuple{1, 3.0, 2.0}, std::tuple{2, 2.5, 5.0}, std::tuple{4, 2.0, 4.0}}) {
    for (auto [clients, goodput] : {std::pair{1, one}, std::pair{4, four}}) {
      MetricValues m = batched_metrics(40, 100, 20);
      m[metric::kGoodputPerSecond] = around(goodput, goodput * 0.01);
      record(store, sweep, {trial_config(2, np, served(clients)), m});
    }
  }
  auto r = recommend_sweep(store, sweep, no_store_options());
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->candidates.size(), 3u);
  const ScenarioRecommendation& s = r->scenarios.back();
  ASSERT_EQ(s.scenario, Scenario::serving);
  ASSERT_TRUE(s.winner && s.runner_up) << s.no_winner_reason;
  EXPECT_EQ(r->candidates[*s.winner].n_parallel(), 2);
  EXPECT_EQ(r->candidates[*s.runner_up].n_parallel(), 4);
  EXPECT_NEAR(s.winner_score->value, 5.0, 1e-9);
  EXPECT_EQ(s.score_unit, "requests/s");
  EXPECT_NE(s.rule.find("serve c4 pp90+tg32"), std::string::npos) << s.rule;
  EXPECT_NE(s.rule.find("TTFT <= 500 ms"), std::string::npos) << s.rule;
  EXPECT_EQ(s.commands.infertune.rfind("infertune serve ", 0), 0u) << s.commands.infertune;
  EXPECT_EQ(s.commands.llama_cpp.rfind("llama-server ", 0), 0u) << s.commands.llama_cpp;
}

TEST_F(RecommendScenarios, LatencyIntervalAddsThePartsInQuadrature) {
  const auto r = run(no_store_options());
  const auto& latency = scenario(r, Scenario::latency);
  // np1: TTFT 50 ± kCi3 x 0.5, ITL 10 ± kCi3 x 0.1, reply = TTFT + 63 ITL.
  const double expected = std::hypot(kCi3 * 0.5, 63 * kCi3 * 0.1);
  ASSERT_TRUE(latency.winner_score->ci95_half_width);
  EXPECT_NEAR(*latency.winner_score->ci95_half_width, expected, 1e-9);
}

TEST_F(RecommendScenarios, MaxMemUsesTheLargerOfPredictedAndMeasured) {
  RecommendOptions options = no_store_options();
  options.max_mem_bytes = 7500;  // np8: measured 7200 fits, predicted 8000 does not
  const auto r = run(options);
  EXPECT_EQ(np_of(r, scenario(r, Scenario::throughput).winner), 4);
  size_t excluded = 0;
  for (const auto& c : r.candidates) {
    if (c.excluded_reason.empty()) continue;
    ++excluded;
    EXPECT_EQ(c.n_parallel(), 8);
    EXPECT_NE(c.excluded_reason.find("--max-mem"), std::string::npos) << c.excluded_reason;
  }
  EXPECT_EQ(excluded, 1u);
  for (size_t i : r.pareto_front) EXPECT_NE(r.candidates[i].n_parallel(), 8);
}

// --min-ctx is the context the command lines run with: a candidate measured at a smaller one keeps its scores and
// is not excluded, but its command says -c 1024 (the model file is not there, so no memory is predicted: said).
TEST_F(RecommendScenarios, MinCtxRaisesTheCommandLinesContext) {
  SyntheticTrial t{trial_config(2, 1, batched_workload(1), 512), batched_metrics(100, 1, 1)};
  record(*store_, sweep_, t);  // wins everything, but its context is 512
  RecommendOptions options = no_store_options();
  options.min_ctx = 1024;
  const auto r = run(options);
  const ScenarioRecommendation& throughput = scenario(r, Scenario::throughput);
  ASSERT_TRUE(throughput.winner);
  const Candidate& winner = r.candidates[*throughput.winner];
  EXPECT_EQ(winner.n_ctx(), 512);
  EXPECT_EQ(winner.command_ctx, 1024);
  EXPECT_NE(throughput.commands.infertune.find("-c 1024"), std::string::npos) << throughput.commands.infertune;
  EXPECT_NE(throughput.commands.llama_cpp.find("-c 1024"), std::string::npos) << throughput.commands.llama_cpp;
  EXPECT_FALSE(winner.command_memory);
  EXPECT_NE(winner.command_memory_note.find("not predicted"), std::string::npos) << winner.command_memory_note;
  for (const Candidate& c : r.candidates) {
    EXPECT_TRUE(c.excluded_reason.empty()) << c.excluded_reason;
    EXPECT_EQ(c.command_ctx, std::max<int64_t>(c.n_ctx(), 1024));
  }
}

TEST_F(RecommendScenarios, EveryConfigurationExcludedSaysWhy) {
  RecommendOptions options = no_store_options();
  options.max_mem_bytes = 10;
  const auto r = run(options);
  EXPECT_FALSE(r.has_recommendation());
  EXPECT_NE(r.no_candidates_reason.find("constraint"), std::string::npos) << r.no_candidates_reason;
  EXPECT_NE(format_recommendation_text(r).find("No recommendation"), std::string::npos);
}

TEST_F(RecommendScenarios, StoresOneRowPerScenarioAndReplacesThemOnRerun) {
  RecommendOptions options;
  run(options);
  run(options);
  auto q = store_->database().prepare(
      "SELECT scenario, trial_id, details FROM recommendations WHERE sweep_id = ? ORDER BY scenario");
  ASSERT_TRUE(q);
  q->bind(1, sweep_);
  std::map<std::string, std::pair<int64_t, nlohmann::json>> rows;
  for (;;) {
    auto row = q->step();
    ASSERT_TRUE(row);
    if (!*row) break;
    ASSERT_FALSE(rows.contains(q->column_text(0))) << "duplicate " << q->column_text(0);
    rows[q->column_text(0)] = {q->column_int(1), nlohmann::json::parse(q->column_text(2))};
  }
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows["latency"].first, ids_[0]);
  EXPECT_EQ(rows["throughput"].first, ids_[3]);
  EXPECT_EQ(rows["mixed"].first, ids_[1]);
  EXPECT_EQ(rows["throughput"].second["scenario"], "throughput");
  EXPECT_EQ(rows["throughput"].second["winner"]["n_parallel"], 8);
  EXPECT_EQ(rows["throughput"].second["trial_id"], ids_[3]);
}

TEST_F(RecommendScenarios, OneScenarioOnly) {
  RecommendOptions options = no_store_options();
  options.scenarios = {Scenario::latency};
  const auto r = run(options);
  ASSERT_EQ(r.scenarios.size(), 1u);
  EXPECT_EQ(r.scenarios[0].scenario, Scenario::latency);
}

TEST(RecommendCandidates, WorkloadsOfOneConfigurationAreOneCandidate) {
  int64_t sweep = 0;
  auto store = store_with_sweep(temp_dir() / "results.db", sweep);
  // -c 0: each workload got the context it needs, so the configs differ in n_ctx too.
  record(store, sweep,
         {trial_config(4, 1, single_workload("pp", 512, 0), 512), {{metric::kPromptTokensPerSecond, around(300, 3)}}});
  record(store, sweep,
         {trial_config(4, 1, single_workload("tg", 0, 128), 128),
          {{metric::kGenTokensPerSecond, around(30, 0.3)}, {metric::kInterTokenLatencyMs, around(33, 0.5)}}});
  record(store, sweep,
         {trial_config(2, 1, single_workload("tg", 0, 128), 128),
          {{metric::kGenTokensPerSecond, around(20, 0.3)}, {metric::kInterTokenLatencyMs, around(50, 0.5)}}});
  auto r = recommend_sweep(store, sweep, no_store_options());
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->candidates.size(), 2u);
  const Candidate& four = r->candidates[0];
  EXPECT_EQ(four.workloads.size(), 2u);
  EXPECT_EQ(four.n_ctx(), 512);  // the larger, which fits both
  // Throughput falls back to tg_tps (no batched workload), on tg128: both candidates measured it.
  ASSERT_TRUE(r->throughput_basis);
  EXPECT_EQ(r->throughput_basis->metric, metric::kGenTokensPerSecond);
  EXPECT_EQ(r->throughput_basis->workload, workload_shape(single_workload("tg", 0, 128)));
  const auto& throughput = r->scenarios[1];
  ASSERT_TRUE(throughput.winner);
  EXPECT_EQ(*throughput.winner, 0u);
  // Latency on tg128 has no TTFT: 127 x ITL.
  ASSERT_TRUE(r->latency_basis);
  EXPECT_FALSE(r->latency_basis->with_ttft);
  EXPECT_EQ(r->latency_basis->itl_gaps, 127);
  EXPECT_NEAR(r->scenarios[0].winner_score->value, 127 * 33.0, 1e-9);
}

TEST(RecommendCandidates, ExplicitContextsStayApart) {
  int64_t sweep = 0;
  auto store = store_with_sweep(temp_dir() / "results.db", sweep);
  for (int ctx : {1024, 4096}) {
    for (const char* kind : {"pp", "tg"}) {
      const bool pp = std::string(kind) == "pp";
      record(store, sweep,
             {trial_config(2, 1, single_workload(kind, pp ? 512 : 0, pp ? 0 : 64), ctx),
              {{pp ? metric::kPromptTokensPerSecond : metric::kGenTokensPerSecond, around(10, 1)}}});
    }
  }
  auto r = recommend_sweep(store, sweep, no_store_options());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->candidates.size(), 2u);
  EXPECT_EQ(r->candidates[0].n_ctx(), 1024);
  EXPECT_EQ(r->candidates[1].n_ctx(), 4096);
  EXPECT_EQ(r->candidates[0].workloads.size(), 2u);
}

TEST(RecommendEmpty, SweepWithoutTrialsSaysSo) {
  int64_t sweep = 0;
  auto store = store_with_sweep(temp_dir() / "results.db", sweep);
  auto r = recommend_sweep(store, sweep, {});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->has_recommendation());
  EXPECT_NE(r->no_candidates_reason.find("no trials"), std::string::npos) << r->no_candidates_reason;
  const std::string text = format_recommendation_text(*r);
  EXPECT_NE(text.find("No recommendation: sweep"), std::string::npos) << text;
  for (const auto& s : r->scenarios) EXPECT_EQ(s.no_winner_reason, r->no_candidates_reason);
}

TEST(RecommendEmpty, OnlyFailedTrialsSaysSo) {
  int64_t sweep = 0;
  auto store = store_with_sweep(temp_dir() / "results.db", sweep);
  SyntheticTrial failed{trial_config(2, 1, batched_workload(1)), {}};
  failed.status = TrialStatus::oom;
  record(store, sweep, failed);
  auto r = recommend_sweep(store, sweep, {});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->n_trials, 1u);
  EXPECT_NE(r->no_candidates_reason.find("no ok trials"), std::string::npos) << r->no_candidates_reason;
  EXPECT_TRUE(recommendation_json(*r)["scenarios"]["latency"]["winner"].is_null());
}

TEST(RecommendEmpty, UnknownSweepIsAnError) {
  int64_t sweep = 0;
  auto store = store_with_sweep(temp_dir() / "results.db", sweep);
  auto r = recommend_sweep(store, sweep + 41, {});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(std::to_string(sweep + 41)), std::string::npos) << r.error().message;
}

TEST(RecommendEmpty, ConfigWithoutWorkloadIsLeftOutNotACrash) {
  int64_t sweep = 0;
  auto store = store_with_sweep(temp_dir() / "results.db", sweep);
  TrialRecord t = test_trial(sweep, 1);  // config {"threads": 1}: no workload
  ASSERT_TRUE(store.record_trial(t));
  SyntheticTrial odd{{{"threads", "many"}, {"n_parallel", "x"}, {"workload", {{"kind", 3}}}},
                     {{metric::kGenTokensPerSecond, around(5, 1)}}};
  record(store, sweep, odd);
  auto r = recommend_sweep(store, sweep, no_store_options());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->n_unusable, 1u);
  EXPECT_FALSE(format_recommendation_text(*r).empty());
}

}  // namespace
}  // namespace infertune
