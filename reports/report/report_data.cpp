#include "reports/report/report_data.h"

#include <fmt/format.h>

#include <algorithm>

#include "sweeps/trial/trial_config.h"

namespace infertune {
namespace {

nlohmann::json parse_json_column(const std::string& text) {
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  return parsed.is_discarded() ? nlohmann::json() : parsed;
}

Result<ReportHost> read_host(ResultsStore& store, int64_t host_id) {
  auto q = store.database().prepare(
      "SELECT fingerprint, cpu_model, cpu_features, physical_cores, hardware_threads, memory_bytes, numa_nodes,"
      " gpus, read_bandwidth_gbs, probe FROM hosts WHERE id = ?");
  if (!q) return q.error();
  q->bind(1, host_id);
  auto row = q->step();
  if (!row) return row.error();
  ReportHost h;
  if (!*row) return h;  // a dangling id cannot happen with foreign keys on; show an empty host rather than fail
  h.fingerprint = q->column_text(0);
  h.cpu_model = q->column_text(1);
  h.cpu_features = q->column_text(2);
  h.physical_cores = q->column_int(3);
  h.hardware_threads = q->column_int(4);
  h.memory_bytes = q->column_int(5);
  h.numa_nodes = parse_json_column(q->column_text(6));
  h.gpus = parse_json_column(q->column_text(7));
  h.read_bandwidth_gbs = q->column_optional_double(8);
  h.probe = parse_json_column(q->column_text(9));
  return h;
}

Result<ReportBuild> read_build(ResultsStore& store, int64_t build_id) {
  auto q = store.database().prepare(
      "SELECT version, git_commit, compiler, build_type, flags, backends, kernel_variants FROM builds WHERE id = ?");
  if (!q) return q.error();
  q->bind(1, build_id);
  auto row = q->step();
  if (!row) return row.error();
  ReportBuild b;
  if (!*row) return b;
  b.version = q->column_text(0);
  b.git_commit = q->column_text(1);
  b.compiler = q->column_text(2);
  b.build_type = q->column_text(3);
  b.flags = q->column_text(4);
  b.backends = q->column_text(5);
  b.kernel_variants = q->column_text(6);
  return b;
}

struct ModelRow {
  std::string path, content_hash;
};

Result<std::map<int64_t, ModelRow>> read_models(ResultsStore& store) {
  auto q = store.database().prepare("SELECT id, path, content_hash FROM models");
  if (!q) return q.error();
  std::map<int64_t, ModelRow> models;
  for (;;) {
    auto row = q->step();
    if (!row) return row.error();
    if (!*row) return models;
    models[q->column_int(0)] = {q->column_text(1), q->column_text(2)};
  }
}

std::string workload_name(const nlohmann::json& config) {
  if (!config.is_object() || !config.contains("workload")) return "";
  auto workload = parse_workload(config["workload"]);
  return workload ? workload->name() : "";
}

ReportTrial report_trial(StoredTrial&& stored, const std::map<int64_t, ModelRow>& models) {
  ReportTrial t;
  t.id = stored.id;
  t.status = std::string(to_string(stored.trial.status));
  t.reason = stored.trial.reason;
  t.config = parse_json_column(stored.trial.config_json);
  std::string model_hash;
  if (stored.trial.model_id) {
    const auto it = models.find(*stored.trial.model_id);
    if (it != models.end()) {
      t.model_path = it->second.path;
      model_hash = it->second.content_hash;
    }
  }
  if (t.model_path.empty() && t.config.is_object() && t.config.value("model", nlohmann::json()).is_string()) {
    t.model_path = t.config["model"].get<std::string>();
  }
  t.key = configuration_key(t.config, model_hash);
  t.workload = workload_name(t.config);
  for (MetricRecord& m : stored.metrics) t.metrics[m.metric] = m.summary;
  t.predicted_rss_bytes = stored.trial.predicted_peak_rss_bytes;
  t.peak_rss_bytes = stored.trial.peak_rss_bytes;
  t.duration_s = stored.trial.duration_s;
  t.started_at = stored.trial.started_at;
  return t;
}

Result<std::vector<int64_t>> all_sweep_ids(ResultsStore& store) {
  auto q = store.database().prepare("SELECT id FROM sweeps ORDER BY id");
  if (!q) return q.error();
  std::vector<int64_t> ids;
  for (;;) {
    auto row = q->step();
    if (!row) return row.error();
    if (!*row) return ids;
    ids.push_back(q->column_int(0));
  }
}

Result<std::vector<int64_t>> chosen_sweep_ids(ResultsStore& store, const std::filesystem::path& path,
                                              const SweepSelection& selection) {
  if (!selection.ids.empty()) return selection.ids;
  if (selection.all) return all_sweep_ids(store);
  auto latest = store.latest_sweep_id();
  if (!latest) return latest.error();
  if (!*latest) return fail("results store {}: has no sweeps", path.string());
  return std::vector<int64_t>{**latest};
}

Result<ReportSweep> load_sweep(ResultsStore& store, const std::filesystem::path& path, int64_t id,
                               const std::map<int64_t, ModelRow>& models) {
  auto sweep = store.find_sweep(id);
  if (!sweep) return sweep.error();
  if (!*sweep) return fail("results store {}: no sweep {}", path.string(), id);
  ReportSweep r;
  r.store = path;
  r.name = fmt::format("{}, sweep {}", path.filename().string(), id);
  r.sweep = **sweep;
  auto host = read_host(store, r.sweep.host_id);
  if (!host) return host.error();
  r.host = std::move(*host);
  auto build = read_build(store, r.sweep.build_id);
  if (!build) return build.error();
  r.build = std::move(*build);
  auto trials = store.trials(id);
  if (!trials) return trials.error();
  for (StoredTrial& t : *trials) r.trials.push_back(report_trial(std::move(t), models));

  RecommendOptions options;
  options.store_recommendations = false;  // a report only reads
  auto recommendation = recommend_sweep(store, id, options);
  if (recommendation) {
    r.recommendation = std::move(*recommendation);
  } else {
    r.recommendation_error = recommendation.error().message;
  }
  return r;
}

}  // namespace

const SampleSummary* ReportTrial::metric(const std::string& name) const {
  const auto it = metrics.find(name);
  return it == metrics.end() ? nullptr : &it->second;
}

size_t ReportSweep::count(std::string_view status) const {
  return static_cast<size_t>(std::ranges::count_if(trials, [&](const ReportTrial& t) { return t.status == status; }));
}

Result<std::vector<ReportSweep>> load_report_sweeps(const std::filesystem::path& store_path,
                                                    const SweepSelection& selection) {
  auto store = ResultsStore::open_read_only(store_path);
  if (!store) return store.error();
  auto ids = chosen_sweep_ids(*store, store_path, selection);
  if (!ids) return ids.error();
  auto models = read_models(*store);
  if (!models) return models.error();
  std::vector<ReportSweep> sweeps;
  for (int64_t id : *ids) {
    auto sweep = load_sweep(*store, store_path, id, *models);
    if (!sweep) return sweep.error();
    sweeps.push_back(std::move(*sweep));
  }
  return sweeps;
}

}  // namespace infertune
