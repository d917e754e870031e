#pragma once
// What a report shows, read from one or more results stores: per chosen sweep its host (with the probe's
// measurements), build, trials (configuration, status, every metric summary, memory), and the
// recommendation computed the way `infertune recommend` computes it (nothing is written to the store).
// Several sweeps, from one store or several, are reported side by side.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernels/result.h"
#include "reports/store_view/configuration_key.h"
#include "sweeps/recommend/recommend.h"
#include "sweeps/store/results_store.h"

namespace infertune {

struct ReportHost {
  std::string fingerprint, cpu_model, cpu_features;
  int64_t physical_cores = 0, hardware_threads = 0, memory_bytes = 0;
  nlohmann::json numa_nodes;  // [{"os_index","memory_bytes","cpus"}]
  nlohmann::json gpus;
  std::optional<double> read_bandwidth_gbs;
  nlohmann::json probe;  // the whole `infertune probe --json` document (bandwidth, compute peak, caches)
};

struct ReportBuild {
  std::string version, git_commit, compiler, build_type, flags, backends, kernel_variants;
};

struct ReportTrial {
  int64_t id = 0;
  std::string status;  // ok, failed, timeout, oom, skipped
  std::string reason;
  nlohmann::json config;
  std::string model_path;   // from the models table, else the config's "model"
  ConfigurationKey key;     // the same configuration in another sweep or store has the same key
  std::string workload;     // Workload::name(): "pp128", "tg32", "batched np4 pp32+tg16"
  std::map<std::string, SampleSummary> metrics;  // by metric_names.h name
  std::optional<int64_t> predicted_rss_bytes, peak_rss_bytes;
  std::optional<double> duration_s;
  std::string started_at;
  bool ok() const { return status == "ok"; }
  const SampleSummary* metric(const std::string& name) const;
};

struct ReportSweep {
  std::filesystem::path store;  // the file it came from
  std::string name;             // "results.db, sweep 3" (unique within a report)
  SweepRecord sweep;
  ReportHost host;
  ReportBuild build;
  std::vector<ReportTrial> trials;  // in the order recorded
  std::optional<RecommendationReport> recommendation;
  std::string recommendation_error;  // why there is none
  size_t count(std::string_view status) const;
};

// Which sweeps of a store to report: the given ids, else every sweep (all = true), else the latest.
struct SweepSelection {
  std::vector<int64_t> ids;
  bool all = false;
};

// The sweeps of one store (opened read-only). An id the store does not hold is an error naming both.
Result<std::vector<ReportSweep>> load_report_sweeps(const std::filesystem::path& store_path,
                                                    const SweepSelection& selection);

}  // namespace infertune
