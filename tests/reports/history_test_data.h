#pragma once
// Stores for the history tests, written with the ResultsStore API: sweeps of chosen builds and hosts at
// chosen times, each with trials whose raw samples are given (plus a wild warmup that must not count).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sweeps/recommend_test_data.h"
#include "sweeps/store/results_store.h"
#include "sweeps/store/stable_hash.h"

namespace infertune::test {

inline constexpr const char* kHostA = "aaaa000011112222";
inline constexpr const char* kHostB = "bbbb000033334444";

// A tg32 trial config with `threads` threads (label "test.gguf tg32 -t N -b 512 -ub 256 -c 4096").
inline nlohmann::json history_tg_config(int threads, const std::string& model = "/models/test.gguf") {
  nlohmann::json config = trial_config(threads, 1, single_workload("tg", 0, 32));
  config["model"] = model;
  return config;
}

// Five samples around `level`, spread by `spread` (a fraction), in a scrambled order.
inline std::vector<double> five_around(double level, double spread = 0.01) {
  return {level * (1 + spread), level * (1 - 2 * spread), level, level * (1 + 2 * spread), level * (1 - spread)};
}

struct HistoryTrial {
  nlohmann::json config;
  std::map<std::string, std::vector<double>> metrics;  // measured repetitions per metric
  TrialStatus status = TrialStatus::ok;
  std::optional<int64_t> model_id{};
};

struct HistorySweep {
  std::string commit;
  std::string time;  // the sweep's started_at
  std::string host = kHostA;
  std::string version = "0.1.0";
  std::vector<HistoryTrial> trials{};
};

inline void record_history_trial(ResultsStore& store, int64_t sweep_id, const HistoryTrial& h) {
  TrialRecord t;
  t.sweep_id = sweep_id;
  t.config_json = h.config.dump();
  t.config_hash = config_hash(h.config);
  t.status = h.status;
  t.model_id = h.model_id;
  if (h.status != TrialStatus::ok) t.reason = "exit status 1: synthetic failure";
  for (const auto& [metric, values] : h.metrics) {
    t.samples.push_back({metric, 0, values.front() * 7 + 1000, true});  // a wild warmup: must be ignored
    for (size_t i = 0; i < values.size(); ++i) t.samples.push_back({metric, int64_t(i + 1), values[i], false});
  }
  auto id = store.record_trial(t);
  ASSERT_TRUE(id) << id.error().message;
}

// One sweep with its host, build (commit, version) and start time, and its trials.
inline int64_t add_history_sweep(ResultsStore& store, const HistorySweep& s) {
  HostRecord host = test_host(s.host);
  host.cpu_model = s.host == kHostA ? "Host A CPU" : "Host B CPU";
  BuildRecord build = test_build();
  build.git_commit = s.commit;
  build.version = s.version;
  auto host_id = store.upsert_host(host);
  auto build_id = store.upsert_build(build);
  EXPECT_TRUE(host_id && build_id);
  auto sweep = store.create_sweep({"threads: [1, 2]\n", "spec-" + s.commit, *host_id, *build_id, ""});
  EXPECT_TRUE(sweep) << sweep.error().message;
  auto set_time = store.database().prepare("UPDATE sweeps SET started_at = ? WHERE id = ?");
  EXPECT_TRUE(set_time);
  set_time->bind(1, s.time).bind(2, *sweep);
  EXPECT_TRUE(set_time->run());
  for (const HistoryTrial& t : s.trials) record_history_trial(store, *sweep, t);
  return *sweep;
}

inline std::string day_time(int day) { return fmt::format("2025-06-{:02d}T12:00:00.000Z", day); }

// Six builds on host A, in time order c1..c6 (the sweeps recorded out of that order): "-t 1" runs at 20 tg
// t/s for c1..c3 and 17 from c4 (a 15% regression); "-t 2" stays at 30 but failed with c5.
// Its ttft_ms rises with c4 (lower is better: a regression too).
inline void write_regression_store(ResultsStore& store) {
  const int order[] = {3, 1, 2, 6, 4, 5};  // recording order of builds: time, not id, orders the points
  for (int build : order) {
    const double tg = build <= 3 ? 20 : 17;
    HistorySweep sweep{fmt::format("c{}{}", build, std::string(38, '0')), day_time(build)};
    sweep.trials.push_back({history_tg_config(1),
                            {{metric::kGenTokensPerSecond, five_around(tg)},
                             {metric::kTimeToFirstTokenMs, five_around(build <= 3 ? 50 : 60)}}});
    HistoryTrial flat{history_tg_config(2),
                      {{metric::kGenTokensPerSecond, five_around(30 * (1 + 0.004 * (build % 3)))}}};
    if (build == 5) {
      flat.metrics.clear();
      flat.status = TrialStatus::failed;
    }
    sweep.trials.push_back(flat);
    add_history_sweep(store, sweep);
  }
}

}  // namespace infertune::test
