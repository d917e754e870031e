#pragma once
// Synthetic sweeps for the recommendation tests: trials with hand-made configs and samples, so every mean
// and confidence interval is known. around(m, d) gives {m - d, m, m + d}: mean m, stddev d, and a 95% CI
// half-width of t(0.975, 2) x d / sqrt(3) = kCi3 x d.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "store_test_data.h"
#include "sweeps/recommend/recommend.h"
#include "sweeps/store/metric_names.h"
#include "sweeps/store/stable_hash.h"

namespace infertune::test {

inline constexpr double kT975Df2 = 4.302652729749464;  // Student t quantile, 2 degrees of freedom
inline const double kCi3 = kT975Df2 / std::sqrt(3.0);

inline std::vector<double> around(double mean, double spread) { return {mean - spread, mean, mean + spread}; }

inline nlohmann::json batched_workload(int np, int pp = 128, int tg = 64) {
  return {{"kind", "batched"}, {"n_prompt", pp}, {"n_gen", tg}, {"depth", 0}, {"n_parallel", np}};
}

inline nlohmann::json single_workload(const std::string& kind, int pp, int tg) {
  return {{"kind", kind}, {"n_prompt", pp}, {"n_gen", tg}, {"depth", 0}, {"n_parallel", 1}};
}

// A full trial config as the planner writes it (sweeps/plan/trial_plan.cpp).
inline nlohmann::json trial_config(int threads, int n_parallel, const nlohmann::json& workload, int n_ctx = 4096) {
  return {{"model", "/models/test.gguf"},
          {"quant", ""},
          {"n_gpu_layers", 0},
          {"mmap", true},
          {"threads", threads},
          {"threads_batch", threads},
          {"numa", "none"},
          {"cpu_mask", "0x0"},
          {"n_ctx", n_ctx},
          {"n_batch", 512},
          {"n_ubatch", 256},
          {"n_parallel", n_parallel},
          {"type_k", "f16"},
          {"type_v", "f16"},
          {"flash_attn", "auto"},
          {"workload", workload}};
}

using MetricValues = std::map<std::string, std::vector<double>>;

struct SyntheticTrial {
  nlohmann::json config;
  MetricValues metrics;  // each value one measured repetition (plus one warmup that must not count)
  std::optional<int64_t> predicted_rss = 1000;
  std::optional<int64_t> measured_rss = 1000;
  TrialStatus status = TrialStatus::ok;
};

inline int64_t record(ResultsStore& store, int64_t sweep_id, const SyntheticTrial& s) {
  TrialRecord t;
  t.sweep_id = sweep_id;
  t.config_json = s.config.dump();
  t.config_hash = config_hash(s.config);
  t.status = s.status;
  if (s.status != TrialStatus::ok) t.reason = "synthetic failure";
  t.predicted_peak_rss_bytes = s.predicted_rss;
  t.peak_rss_bytes = s.measured_rss;
  for (const auto& [metric, values] : s.metrics) {
    t.samples.push_back({metric, 0, values.front() * 7 + 1000, true});  // a wild warmup: must be ignored
    for (size_t i = 0; i < values.size(); ++i) t.samples.push_back({metric, int64_t(i + 1), values[i], false});
  }
  auto id = store.record_trial(t);
  EXPECT_TRUE(id) << id.error().message;
  return id ? *id : -1;
}

// Batched-workload metrics: aggregate tokens/s, TTFT and ITL with the given means.
inline MetricValues batched_metrics(double tps, double ttft_ms, double itl_ms, double spread_fraction = 0.01) {
  return {{metric::kAggregateTokensPerSecond, around(tps, tps * spread_fraction)},
          {metric::kTimeToFirstTokenMs, around(ttft_ms, ttft_ms * spread_fraction)},
          {metric::kInterTokenLatencyMs, around(itl_ms, itl_ms * spread_fraction)}};
}

inline RecommendOptions no_store_options() {
  RecommendOptions o;
  o.store_recommendations = false;
  return o;
}

}  // namespace infertune::test
