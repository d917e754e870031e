#pragma once
// What the results store holds, as C++ values: one struct per table row the API writes or reads back.
// JSON columns are carried as text (the store checks they parse; their fields belong to the writer).
// An empty string or an empty optional is stored as SQL NULL where the column allows it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sweeps/store/statistics.h"

namespace infertune {

enum class TrialStatus { ok, failed, timeout, oom, skipped };
enum class SweepStatus { running, done, interrupted, failed };

std::string_view to_string(TrialStatus status);
std::string_view to_string(SweepStatus status);
std::optional<TrialStatus> parse_trial_status(std::string_view text);
std::optional<SweepStatus> parse_sweep_status(std::string_view text);

struct HostRecord {
  std::string fingerprint;  // host_fingerprint(); the row is updated when the same host is seen again
  std::string cpu_model;
  std::string cpu_features;  // space separated
  int64_t physical_cores = 0;
  int64_t hardware_threads = 0;
  int64_t memory_bytes = 0;
  std::string numa_nodes_json = "[]";
  std::string gpus_json = "[]";
  std::optional<double> read_bandwidth_gbs;
  std::string probe_json = "{}";
};

struct BuildRecord {
  std::string version;
  std::string git_commit;
  std::string compiler;
  std::string build_type;
  std::string flags;
  std::string backends;
  std::string kernel_variants;
};

struct ModelRecord {
  std::string content_hash;  // identifies the model; the same bytes at another path are the same model
  std::string path;
  std::string arch;
  std::optional<int64_t> n_params;
  int64_t file_bytes = 0;
  std::string type_mix_json = "{}";
};

struct NewSweep {
  std::string spec;
  std::string spec_hash;
  int64_t host_id = 0;
  int64_t build_id = 0;
  std::string shard;  // the slice of the plan ("2/3", sweeps/plan/shard_plan.h); "": the whole plan
};

struct SweepRecord {
  int64_t id = 0;
  std::string spec;
  std::string spec_hash;
  SweepStatus status = SweepStatus::running;
  int64_t host_id = 0;
  int64_t build_id = 0;
  std::string started_at;
  std::string finished_at;  // "" while running
  std::string shard;        // "2/3", "1,3/3" (merged slices); "": the whole plan
};

// One raw measurement. A repetition may hold many values of one metric (every inter-token gap).
struct Sample {
  std::string metric;  // metric_names.h
  int64_t repetition = 0;
  double value = 0;
  bool is_warmup = false;
  bool operator==(const Sample&) const = default;
};

struct TrialRecord {
  int64_t sweep_id = 0;
  std::string config_hash;  // config_hash() of config_json's document
  std::string config_json;
  std::optional<int64_t> model_id;
  TrialStatus status = TrialStatus::ok;
  std::string reason;
  std::optional<int64_t> predicted_peak_rss_bytes;
  std::optional<int64_t> peak_rss_bytes;
  std::string started_at;  // time_text.h
  std::string finished_at;
  std::optional<double> duration_s;
  std::vector<Sample> samples;  // written with the trial; not filled when trials are read back
};

// The quality of a quantization variant against the sweep's base model (sweeps/quality), once per variant.
enum class QualityStatus { measured, not_meaningful, failed };
std::string_view to_string(QualityStatus status);
std::optional<QualityStatus> parse_quality_status(std::string_view text);

struct VariantQualityRecord {
  int64_t sweep_id = 0;
  int64_t model_id = 0;  // the variant
  std::optional<int64_t> base_model_id;
  std::string quant;
  QualityStatus status = QualityStatus::measured;
  std::string reason;  // not_meaningful / failed: why there are no figures
  // measured only:
  std::string corpus;
  std::optional<int64_t> n_ctx, n_chunks, positions;
  std::optional<double> ppl, ppl_error, base_ppl;
  std::optional<double> kld_mean, kld_error, kld_p99, kld_max;
  std::optional<double> same_top;  // 0..1
  // (PPL / base PPL - 1) x 100, when both are known.
  std::optional<double> ppl_increase_pct() const;
};

struct MetricRecord {
  std::string metric;
  SampleSummary summary;
};

struct StoredTrial {
  int64_t id = 0;
  TrialRecord trial;
  std::vector<MetricRecord> metrics;  // by metric name
};

}  // namespace infertune
