#pragma once
// Rows the results-store tests write: a host, a build, a sweep and trials with known samples.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "sweeps/store/metric_names.h"
#include "sweeps/store/results_store.h"

namespace infertune::test {

inline HostRecord test_host(const std::string& fingerprint = "00112233aabbccdd") {
  HostRecord host;
  host.fingerprint = fingerprint;
  host.cpu_model = "Test CPU 9000";
  host.cpu_features = "avx2 fma";
  host.physical_cores = 2;
  host.hardware_threads = 4;
  host.memory_bytes = 8ll << 30;
  host.numa_nodes_json = R"([{"os_index":0,"memory_bytes":8589934592,"cpus":"0-3"}])";
  host.read_bandwidth_gbs = 20.5;
  host.probe_json = R"({"format":"infertune-host-probe"})";
  return host;
}

inline BuildRecord test_build() {
  return {"0.1.0", "0123456789ab", "GNU 12.2.0", "Release", "-O3 -DNDEBUG", "cpu", "avx2 scalar"};
}

// A store at `path` with one host, one build and one sweep; returns the sweep id through `sweep_id`.
inline ResultsStore store_with_sweep(const std::filesystem::path& path, int64_t& sweep_id,
                                     const std::string& spec_hash = "spec0000hash0000") {
  auto store = ResultsStore::open(path);
  EXPECT_TRUE(store) << store.error().message;
  auto host = store->upsert_host(test_host());
  auto build = store->upsert_build(test_build());
  EXPECT_TRUE(host && build);
  auto sweep = store->create_sweep({"threads: [1, 2]\n", spec_hash, *host, *build, ""});
  EXPECT_TRUE(sweep) << sweep.error().message;
  sweep_id = *sweep;
  return std::move(*store);
}

// Trial `index` of a sweep: config {"threads": index}, one warmup and three measured pp/tg repetitions.
inline TrialRecord test_trial(int64_t sweep_id, int index, size_t extra_samples = 0) {
  TrialRecord t;
  t.sweep_id = sweep_id;
  t.config_json = "{\"threads\":" + std::to_string(index) + "}";
  t.config_hash = "config-" + std::to_string(index);
  t.status = TrialStatus::ok;
  t.peak_rss_bytes = 1000 + index;
  t.predicted_peak_rss_bytes = 900 + index;
  t.started_at = "2025-06-01T12:00:00.000Z";
  t.finished_at = "2025-06-01T12:00:01.500Z";
  t.duration_s = 1.5;
  t.samples.push_back({metric::kPromptTokensPerSecond, 0, 1.0, true});
  for (int rep = 1; rep <= 3; ++rep) {
    t.samples.push_back({metric::kPromptTokensPerSecond, rep, 100.0 + 10 * rep + index, false});
    t.samples.push_back({metric::kGenTokensPerSecond, rep, 20.0 + rep, false});
  }
  for (size_t i = 0; i < extra_samples; ++i) {
    t.samples.push_back({metric::kInterTokenLatencyMs, 1 + static_cast<int64_t>(i % 3), 10.0 + (i % 7), false});
  }
  return t;
}

}  // namespace infertune::test
