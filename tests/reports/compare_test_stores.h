#pragma once
// Results stores the compare tests write: sweeps of trials with known tg/pp samples.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "sweeps/store/metric_names.h"
#include "sweeps/store/results_store.h"
#include "sweeps/store/stable_hash.h"

namespace infertune::test {

struct TrialSpec {
  TrialSpec(nlohmann::json c, std::vector<double> values, TrialStatus s = TrialStatus::ok, std::string why = "")
      : config(std::move(c)), tg(std::move(values)), status(s), reason(std::move(why)) {}
  nlohmann::json config;
  std::vector<double> tg;  // one value per measured repetition
  TrialStatus status = TrialStatus::ok;
  std::string reason;
};

inline nlohmann::json tg_config(int threads, const std::string& model = "/models/m.gguf") {
  return {{"model", model}, {"threads", threads}, {"workload", {{"kind", "tg"}, {"n_prompt", 0}, {"n_gen", 32}, {"depth", 0}, {"n_parallel", 1}}}};
}

// `n` values around `center`, lognormal with a 1% spread, from `seed`.
inline std::vector<double> noisy(double center, int n, uint64_t seed, double spread = 0.01) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, spread);
  std::vector<double> values;
  for (int i = 0; i < n; ++i) values.push_back(center * std::exp(normal(rng)));
  return values;
}

// A sweep in `store` (host and build shared by every sweep of the file) holding the trials; its id.
inline int64_t add_sweep(ResultsStore& store, const std::vector<TrialSpec>& trials,
                         const std::string& spec_hash = "spec-aa", const std::string& commit = "abc123") {
  HostRecord host;
  host.fingerprint = "00112233aabbccdd";
  host.cpu_model = "Test CPU";
  host.cpu_features = "avx2";
  host.physical_cores = 2;
  host.hardware_threads = 2;
  host.memory_bytes = 1 << 30;
  auto host_id = store.upsert_host(host);
  auto build_id = store.upsert_build({"0.1.0", commit, "GNU", "Release", "-O3", "cpu", "avx2"});
  auto model_id = store.upsert_model({"modelhash1", "/models/m.gguf", "llama", 1000, 4096, "{}"});
  EXPECT_TRUE(host_id && build_id && model_id);
  auto sweep = store.create_sweep({"spec", spec_hash, *host_id, *build_id, ""});
  EXPECT_TRUE(sweep);
  for (const TrialSpec& spec : trials) {
    TrialRecord t;
    t.sweep_id = *sweep;
    t.config_json = spec.config.dump();
    t.config_hash = config_hash(spec.config);
    t.model_id = *model_id;
    t.status = spec.status;
    t.reason = spec.reason;
    t.samples.push_back({metric::kGenTokensPerSecond, 0, 1.0, true});  // a warmup, never compared
    for (size_t i = 0; i < spec.tg.size(); ++i) {
      t.samples.push_back({metric::kGenTokensPerSecond, static_cast<int64_t>(i + 1), spec.tg[i], false});
    }
    auto id = store.record_trial(t);
    EXPECT_TRUE(id) << id.error().message;
  }
  EXPECT_TRUE(store.set_sweep_status(*sweep, SweepStatus::done));
  return *sweep;
}

}  // namespace infertune::test
