// The results store's API: upserts, sweeps, record_trial with its samples and computed summaries, the
// once-per-sweep rule, resume queries, and the trial_summary view.
#include <gtest/gtest.h>

#include <cmath>

#include "store_test_data.h"
#include "sweeps/store/stable_hash.h"
#include "test_support.h"

namespace infertune {
namespace {

int64_t scalar(ResultsStore& store, const std::string& sql) {
  auto q = store.database().prepare(sql);
  EXPECT_TRUE(q) << q.error().message;
  EXPECT_TRUE(*q->step()) << sql;
  return q->column_int(0);
}

const MetricRecord* find_metric(const StoredTrial& t, const std::string& name) {
  for (const auto& m : t.metrics) {
    if (m.metric == name) return &m;
  }
  return nullptr;
}

TEST(ResultsStore, UpsertsReturnTheSameRowForTheSameKey) {
  auto store = ResultsStore::open(test::temp_dir() / "r.db");
  ASSERT_TRUE(store);
  HostRecord host = test::test_host();
  auto first = store->upsert_host(host);
  ASSERT_TRUE(first) << first.error().message;
  host.read_bandwidth_gbs = 30.0;
  auto again = store->upsert_host(host);
  ASSERT_TRUE(again);
  EXPECT_EQ(*first, *again);
  EXPECT_EQ(scalar(*store, "SELECT count(*) FROM hosts"), 1);
  EXPECT_EQ(scalar(*store, "SELECT read_bandwidth_gbs = 30.0 FROM hosts"), 1);  // the new measurement kept
  auto other = store->upsert_host(test::test_host("ffffffffffffffff"));
  ASSERT_TRUE(other);
  EXPECT_NE(*other, *first);

  auto build = store->upsert_build(test::test_build());
  ASSERT_TRUE(build) << build.error().message;
  EXPECT_EQ(*store->upsert_build(test::test_build()), *build);
  BuildRecord dirty = test::test_build();
  dirty.git_commit += "-dirty";
  EXPECT_NE(*store->upsert_build(dirty), *build);

  ModelRecord model{"hash-of-bytes", "/tmp/a.gguf", "llama", 1000, 4096, R"({"q4_K": 3000, "f32": 1096})"};
  auto m = store->upsert_model(model);
  ASSERT_TRUE(m) << m.error().message;
  model.path = "/elsewhere/a.gguf";
  EXPECT_EQ(*store->upsert_model(model), *m);  // same content, new path
  EXPECT_EQ(scalar(*store, "SELECT count(*) FROM models WHERE path = '/elsewhere/a.gguf'"), 1);
}

TEST(ResultsStore, InvalidJsonInAHostIsRefused) {
  auto store = ResultsStore::open(test::temp_dir() / "r.db");
  ASSERT_TRUE(store);
  HostRecord host = test::test_host();
  host.gpus_json = "[not json";
  auto id = store->upsert_host(host);
  ASSERT_FALSE(id);
  EXPECT_NE(id.error().message.find("CHECK constraint"), std::string::npos) << id.error().message;
}

TEST(ResultsStore, SweepsAreFoundByIdAndBySpecHash) {
  const auto path = test::temp_dir() / "r.db";
  int64_t sweep = 0;
  ResultsStore store = test::store_with_sweep(path, sweep, "aaaa");
  auto found = store.find_sweep(sweep);
  ASSERT_TRUE(found);
  ASSERT_TRUE(*found);
  EXPECT_EQ((*found)->spec_hash, "aaaa");
  EXPECT_EQ((*found)->spec, "threads: [1, 2]\n");
  EXPECT_EQ((*found)->status, SweepStatus::running);
  EXPECT_TRUE((*found)->finished_at.empty());
  EXPECT_FALSE(*store.find_sweep(sweep + 100));

  auto later = store.create_sweep({"again", "aaaa", (*found)->host_id, (*found)->build_id, ""});
  ASSERT_TRUE(later);
  auto latest = store.find_latest_sweep("aaaa");
  ASSERT_TRUE(latest && *latest);
  EXPECT_EQ((*latest)->id, *later);
  EXPECT_FALSE(*store.find_latest_sweep("bbbb"));

  ASSERT_TRUE(store.set_sweep_status(sweep, SweepStatus::interrupted));
  EXPECT_EQ((*store.find_sweep(sweep))->status, SweepStatus::interrupted);
  EXPECT_FALSE((*store.find_sweep(sweep))->finished_at.empty());
  ASSERT_TRUE(store.set_sweep_status(sweep, SweepStatus::running));  // resumed
  EXPECT_TRUE((*store.find_sweep(sweep))->finished_at.empty());
  EXPECT_FALSE(store.set_sweep_status(9999, SweepStatus::done));
}

TEST(ResultsStore, ASweepNeedsAKnownHostAndBuild) {
  auto store = ResultsStore::open(test::temp_dir() / "r.db");
  ASSERT_TRUE(store);
  auto sweep = store->create_sweep({"spec", "hash", 41, 42, ""});
  ASSERT_FALSE(sweep);
  EXPECT_NE(sweep.error().message.find("FOREIGN KEY"), std::string::npos) << sweep.error().message;
}

TEST(ResultsStore, RecordTrialStoresSamplesAndTheirSummaries) {
  int64_t sweep = 0;
  ResultsStore store = test::store_with_sweep(test::temp_dir() / "r.db", sweep);
  const TrialRecord trial = test::test_trial(sweep, 2);
  auto id = store.record_trial(trial);
  ASSERT_TRUE(id) << id.error().message;

  auto trials = store.trials(sweep);
  ASSERT_TRUE(trials) << trials.error().message;
  ASSERT_EQ(trials->size(), 1u);
  const StoredTrial& t = (*trials)[0];
  EXPECT_EQ(t.id, *id);
  EXPECT_EQ(t.trial.config_json, trial.config_json);
  EXPECT_EQ(t.trial.config_hash, trial.config_hash);
  EXPECT_EQ(t.trial.status, TrialStatus::ok);
  EXPECT_EQ(t.trial.peak_rss_bytes, 1002);
  EXPECT_EQ(t.trial.predicted_peak_rss_bytes, 902);
  EXPECT_EQ(t.trial.started_at, trial.started_at);
  EXPECT_EQ(t.trial.duration_s, 1.5);
  EXPECT_TRUE(t.trial.reason.empty());
  ASSERT_EQ(t.metrics.size(), 2u);  // pp_tps and tg_tps, sorted by name

  // pp_tps measured 112, 122, 132 (the warmup's 1.0 excluded): mean 122, stddev 10.
  const MetricRecord* pp = find_metric(t, metric::kPromptTokensPerSecond);
  ASSERT_TRUE(pp);
  EXPECT_EQ(pp->summary.n, 3u);
  EXPECT_DOUBLE_EQ(pp->summary.mean, 122);
  EXPECT_DOUBLE_EQ(*pp->summary.stddev, 10);
  EXPECT_DOUBLE_EQ(pp->summary.median, 122);
  EXPECT_NEAR(*pp->summary.ci95_half_width, 24.84138, 1e-5);
  const MetricRecord* tg = find_metric(t, metric::kGenTokensPerSecond);
  ASSERT_TRUE(tg);
  EXPECT_DOUBLE_EQ(tg->summary.mean, 22);

  auto samples = store.samples(*id);
  ASSERT_TRUE(samples);
  EXPECT_EQ(*samples, trial.samples);  // every raw value, warmup flagged, in order
}

TEST(ResultsStore, AFailedTrialKeepsItsReasonAndHasNoMetrics) {
  int64_t sweep = 0;
  ResultsStore store = test::store_with_sweep(test::temp_dir() / "r.db", sweep);
  TrialRecord t;
  t.sweep_id = sweep;
  t.config_json = R"({"threads": 8})";
  t.config_hash = "c8";
  t.status = TrialStatus::oom;
  t.reason = "killed by signal 9 (SIGKILL)\nlast stderr: allocating 12 GiB";
  t.predicted_peak_rss_bytes = 12ll << 30;
  ASSERT_TRUE(store.record_trial(t));
  auto trials = store.trials(sweep);
  ASSERT_TRUE(trials);
  EXPECT_EQ((*trials)[0].trial.status, TrialStatus::oom);
  EXPECT_EQ((*trials)[0].trial.reason, t.reason);
  EXPECT_FALSE((*trials)[0].trial.peak_rss_bytes);
  EXPECT_TRUE((*trials)[0].metrics.empty());
}

TEST(ResultsStore, RecordingTheSameConfigTwiceIsAnErrorAndWritesNothing) {
  int64_t sweep = 0;
  ResultsStore store = test::store_with_sweep(test::temp_dir() / "r.db", sweep);
  auto first = store.record_trial(test::test_trial(sweep, 1));
  ASSERT_TRUE(first);
  TrialRecord again = test::test_trial(sweep, 1);
  again.status = TrialStatus::failed;
  auto second = store.record_trial(again);
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("already recorded"), std::string::npos) << second.error().message;
  EXPECT_NE(second.error().message.find("config-1"), std::string::npos) << second.error().message;
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM trials"), 1);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM samples"), 7);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM trials WHERE status = 'ok'"), 1);

  // The constraint itself holds too, whoever writes.
  Status raw = store.database().exec("INSERT INTO trials (sweep_id, config_hash, config, status) VALUES (" +
                                     std::to_string(sweep) + ", 'config-1', '{}', 'ok')");
  ASSERT_FALSE(raw);
  EXPECT_NE(raw.error().message.find("UNIQUE"), std::string::npos) << raw.error().message;

  // The same config in another sweep is a different trial.
  auto sweep2 = store.create_sweep({"s", "h2", 1, 1, ""});
  ASSERT_TRUE(sweep2);
  EXPECT_TRUE(store.record_trial(test::test_trial(*sweep2, 1)));
}

TEST(ResultsStore, ABadTrialWritesNothing) {
  int64_t sweep = 0;
  ResultsStore store = test::store_with_sweep(test::temp_dir() / "r.db", sweep);
  TrialRecord nan = test::test_trial(sweep, 1);
  nan.samples.push_back({metric::kGenTokensPerSecond, 4, std::nan(""), false});
  auto r = store.record_trial(nan);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("'tg_tps'"), std::string::npos) << r.error().message;

  auto unknown_sweep = store.record_trial(test::test_trial(sweep + 7, 1));
  ASSERT_FALSE(unknown_sweep);
  EXPECT_NE(unknown_sweep.error().message.find("FOREIGN KEY"), std::string::npos) << unknown_sweep.error().message;

  TrialRecord bad_json = test::test_trial(sweep, 2);
  bad_json.config_json = "{threads: 2}";
  EXPECT_FALSE(store.record_trial(bad_json));

  TrialRecord unknown_model = test::test_trial(sweep, 3);
  unknown_model.model_id = 77;
  EXPECT_FALSE(store.record_trial(unknown_model));

  EXPECT_EQ(scalar(store, "SELECT count(*) FROM trials"), 0);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM samples"), 0);
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM metrics"), 0);
  EXPECT_TRUE(store.record_trial(test::test_trial(sweep, 1)));  // the transaction was not left open
}

TEST(ResultsStore, DoneConfigHashesAreWhatResumeSkips) {
  int64_t sweep = 0;
  ResultsStore store = test::store_with_sweep(test::temp_dir() / "r.db", sweep);
  for (int i : {3, 1, 4}) ASSERT_TRUE(store.record_trial(test::test_trial(sweep, i)));
  auto done = store.done_config_hashes(sweep);
  ASSERT_TRUE(done);
  EXPECT_EQ(*done, (std::set<std::string>{"config-1", "config-3", "config-4"}));
  EXPECT_TRUE(store.done_config_hashes(sweep + 1)->empty());
  auto found = store.find_trial(sweep, "config-4");
  ASSERT_TRUE(found && *found);
  EXPECT_FALSE(*store.find_trial(sweep, "config-5"));
  auto trials = store.trials(sweep);
  ASSERT_EQ(trials->size(), 3u);
  EXPECT_EQ((*trials)[0].trial.config_hash, "config-3");  // in recording order
}

TEST(ResultsStore, TrialSummaryViewHasOneRowPerTrialWithItsMainMetrics) {
  int64_t sweep = 0;
  ResultsStore store = test::store_with_sweep(test::temp_dir() / "r.db", sweep);
  auto model = store.upsert_model({"h", "/models/m.gguf", "llama", 10, 100, "{}"});
  ASSERT_TRUE(model);
  TrialRecord t = test::test_trial(sweep, 0);
  t.model_id = *model;
  for (double v : {40.0, 60.0}) t.samples.push_back({metric::kTimeToFirstTokenMs, 1, v, false});
  for (double v : {10.0, 10.0, 10.0, 20.0, 20.0}) t.samples.push_back({metric::kInterTokenLatencyMs, 1, v, false});
  t.samples.push_back({metric::kInterTokenLatencyMs, 0, 500.0, true});
  ASSERT_TRUE(store.record_trial(t));
  TrialRecord failed = test::test_trial(sweep, 1);
  failed.status = TrialStatus::timeout;
  failed.samples.clear();
  ASSERT_TRUE(store.record_trial(failed));

  auto q = store.database().prepare(
      "SELECT trial_id, status, model, pp_tps, tg_tps, ttft_ms, itl_p50_ms, itl_p95_ms, peak_rss_bytes,"
      " aggregate_tps FROM trial_summary ORDER BY trial_id");
  ASSERT_TRUE(q) << q.error().message;
  ASSERT_TRUE(*q->step());
  EXPECT_EQ(q->column_text(1), "ok");
  EXPECT_EQ(q->column_text(2), "/models/m.gguf");
  EXPECT_DOUBLE_EQ(q->column_double(3), 120);  // 110, 120, 130
  EXPECT_DOUBLE_EQ(q->column_double(4), 22);
  EXPECT_DOUBLE_EQ(q->column_double(5), 50);  // median of 40, 60
  EXPECT_DOUBLE_EQ(q->column_double(6), 10);  // warmup's 500 excluded
  EXPECT_DOUBLE_EQ(q->column_double(7), 20);
  EXPECT_EQ(q->column_int(8), 1000);
  EXPECT_TRUE(q->column_is_null(9));  // not measured
  ASSERT_TRUE(*q->step());
  EXPECT_EQ(q->column_text(1), "timeout");
  EXPECT_TRUE(q->column_is_null(2));
  EXPECT_TRUE(q->column_is_null(3));
  EXPECT_FALSE(*q->step());
}

TEST(ResultsStore, RecommendationsReferToTrials) {
  int64_t sweep = 0;
  ResultsStore store = test::store_with_sweep(test::temp_dir() / "r.db", sweep);
  auto trial = store.record_trial(test::test_trial(sweep, 1));
  ASSERT_TRUE(trial);
  EXPECT_TRUE(store.add_recommendation(sweep, "throughput", *trial, R"({"margin": 0.04})"));
  EXPECT_FALSE(store.add_recommendation(sweep, "latency", *trial + 10, "{}"));
  EXPECT_FALSE(store.add_recommendation(sweep, "latency", *trial, "not json"));
  EXPECT_EQ(scalar(store, "SELECT count(*) FROM recommendations"), 1);
}

TEST(StableHash, Fnv1a64OfKnownTexts) {
  EXPECT_EQ(stable_hash(""), "cbf29ce484222325");
  EXPECT_EQ(stable_hash("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(stable_hash("foobar"), "85944171f73967e8");
}

TEST(StableHash, ConfigHashIgnoresKeyOrder) {
  const auto a = nlohmann::json::parse(R"({"threads": 4, "batch": 512, "model": "m.gguf"})");
  const auto b = nlohmann::json::parse(R"({"model": "m.gguf", "batch": 512, "threads": 4})");
  EXPECT_EQ(config_hash(a), config_hash(b));
  EXPECT_EQ(config_hash(a), stable_hash(R"({"batch":512,"model":"m.gguf","threads":4})"));
  EXPECT_NE(config_hash(a), config_hash(nlohmann::json::parse(R"({"threads": 2, "batch": 512, "model": "m.gguf"})")));
}

}  // namespace
}  // namespace infertune
