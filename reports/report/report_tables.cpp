#include "reports/report/report_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "sweeps/store/metric_names.h"

namespace infertune {
namespace {

std::string config_text(const ReportTrial& t, const char* field) {
  if (!t.config.is_object()) return "";
  const auto it = t.config.find(field);
  if (it == t.config.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string model_name(const ReportTrial& t) {
  const std::string quant = config_text(t, "quant");
  const std::string file = std::filesystem::path(t.model_path).filename().string();
  return quant.empty() ? file : quant;
}

std::string depth_text(const ReportTrial& t) {
  if (!t.config.is_object() || !t.config.contains("workload")) return "";
  const auto& w = t.config["workload"];
  return w.contains("depth") ? w["depth"].dump() : "";
}

const std::vector<Dimension> kDimensions{
    {"model", model_name, false},
    {"-t", [](const ReportTrial& t) { return config_text(t, "threads"); }},
    {"-tb", [](const ReportTrial& t) { return config_text(t, "threads_batch"); }},
    {"-b", [](const ReportTrial& t) { return config_text(t, "n_batch"); }},
    {"-ub", [](const ReportTrial& t) { return config_text(t, "n_ubatch"); }},
    {"-np", [](const ReportTrial& t) { return config_text(t, "n_parallel"); }},
    {"-c", [](const ReportTrial& t) { return config_text(t, "n_ctx"); }},
    {"depth", depth_text},
    {"-ngl", [](const ReportTrial& t) { return config_text(t, "n_gpu_layers"); }},
    {"-ctk", [](const ReportTrial& t) { return config_text(t, "type_k"); }, false},
    {"-ctv", [](const ReportTrial& t) { return config_text(t, "type_v"); }, false},
    {"-fa", [](const ReportTrial& t) { return config_text(t, "flash_attn"); }, false},
    {"--numa", [](const ReportTrial& t) { return config_text(t, "numa"); }, false},
    {"-C", [](const ReportTrial& t) { return config_text(t, "cpu_mask"); }, false},
};

Cell number(std::optional<double> v) { return v ? Cell(*v) : Cell(); }
Cell text(std::string s) { return s.empty() ? Cell() : Cell(std::move(s)); }

Cell mean_of(const ReportTrial& t, const char* metric) {
  const SampleSummary* s = t.metric(metric);
  return s ? Cell(s->mean) : Cell();
}
Cell ci_of(const ReportTrial& t, const char* metric) {
  const SampleSummary* s = t.metric(metric);
  return s && s->ci95_half_width ? Cell(*s->ci95_half_width) : Cell();
}
Cell median_of(const ReportTrial& t, const char* metric) {
  const SampleSummary* s = t.metric(metric);
  return s ? Cell(s->median) : Cell();
}
Cell p95_of(const ReportTrial& t, const char* metric) {
  const SampleSummary* s = t.metric(metric);
  return s ? Cell(s->p95) : Cell();
}
Cell mib(std::optional<int64_t> bytes) {
  return bytes ? Cell(static_cast<double>(*bytes) / (1024.0 * 1024.0)) : Cell();
}

std::optional<double> probe_rate(const nlohmann::json& probe, const char* group, const char* rate) {
  const nlohmann::json* node = &probe;
  for (const char* key : {group, rate, "best"}) {
    if (!node->is_object() || !node->contains(key)) return std::nullopt;
    node = &(*node)[key];
  }
  return node->is_number() ? std::optional<double>(node->get<double>()) : std::nullopt;
}

std::optional<double> compute_peak(const nlohmann::json& probe, const char* kind) {
  if (!probe.is_object() || !probe.contains("compute")) return std::nullopt;
  return probe_rate(probe["compute"], kind, "all_cores");
}

bool several(const std::vector<ReportSweep>& sweeps) { return sweeps.size() > 1; }

}  // namespace

const std::vector<Dimension>& report_dimensions() { return kDimensions; }

std::string candidate_label(const Candidate& candidate) {
  nlohmann::json config = candidate.config;  // a candidate's config has no model: its trials' file is apart
  config["model"] = candidate.model_path;
  return configuration_key(config, "").label;
}

std::string main_metric(const ReportTrial& trial) {
  if (trial.workload.starts_with("batched")) return metric::kAggregateTokensPerSecond;
  if (trial.workload.find("tg") != std::string::npos) return metric::kGenTokensPerSecond;
  return metric::kPromptTokensPerSecond;
}

NamedTable sweeps_table(const std::vector<ReportSweep>& sweeps) {
  NamedTable t{"sweeps", "Sweeps, hosts and builds", {}};
  t.table.columns = {"sweep",          "status",           "started",      "finished",         "trials_ok",
                     "trials_failed",  "cpu",              "cores",        "threads",          "ram_gib",
                     "numa_nodes",     "read_gbs",         "f32_gflops",   "int8_gops",        "version",
                     "commit",         "compiler",         "build_type",   "backends",         "kernels"};
  for (const ReportSweep& s : sweeps) {
    t.table.rows.push_back({s.name, std::string(to_string(s.sweep.status)), text(s.sweep.started_at),
                            text(s.sweep.finished_at), int64_t(s.count("ok")), int64_t(s.trials.size() - s.count("ok")),
                            text(s.host.cpu_model), s.host.physical_cores, s.host.hardware_threads,
                            static_cast<double>(s.host.memory_bytes) / (1024.0 * 1024.0 * 1024.0),
                            int64_t(s.host.numa_nodes.is_array() ? s.host.numa_nodes.size() : 0),
                            number(s.host.read_bandwidth_gbs), number(compute_peak(s.host.probe, "f32_fma")),
                            number(compute_peak(s.host.probe, "int8_dot")), text(s.build.version),
                            text(s.build.git_commit), text(s.build.compiler), text(s.build.build_type),
                            text(s.build.backends), text(s.build.kernel_variants)});
  }
  return t;
}

NamedTable recommendations_table(const std::vector<ReportSweep>& sweeps) {
  NamedTable t{"recommendations", "Recommendations", {}};
  t.table.columns = {"sweep", "scenario", "configuration", "score", "ci95", "unit", "margin_pct", "within_noise",
                     "basis", "infertune_command", "llama_cpp_command", "why_none"};
  for (const ReportSweep& s : sweeps) {
    if (!s.recommendation) {
      t.table.rows.push_back({s.name, Cell(), Cell(), Cell(), Cell(), Cell(), Cell(), Cell(), Cell(), Cell(), Cell(),
                              text(s.recommendation_error)});
      continue;
    }
    const RecommendationReport& r = *s.recommendation;
    for (const ScenarioRecommendation& sc : r.scenarios) {
      std::vector<Cell> row{s.name, std::string(to_string(sc.scenario))};
      if (!sc.winner) {
        row.insert(row.end(), {Cell(), Cell(), Cell(), Cell(), Cell(), Cell(), Cell(), Cell(), Cell()});
        row.push_back(text(sc.no_winner_reason.empty() ? "no candidate" : sc.no_winner_reason));
        t.table.rows.push_back(std::move(row));
        continue;
      }
      const Candidate& c = r.candidates[*sc.winner];
      row.push_back(candidate_label(c));
      row.push_back(sc.winner_score ? Cell(sc.winner_score->value) : Cell());
      row.push_back(sc.winner_score ? number(sc.winner_score->ci95_half_width) : Cell());
      row.push_back(text(sc.score_unit));
      row.push_back(sc.margin ? Cell(sc.margin->percent) : Cell());
      row.push_back(sc.margin && sc.margin->within_noise ? Cell(std::string(*sc.margin->within_noise ? "yes" : "no"))
                                                         : Cell());
      row.push_back(sc.basis ? text(sc.basis->description) : Cell());
      row.push_back(text(sc.commands.infertune));
      row.push_back(text(sc.commands.llama_cpp));
      row.push_back(Cell());
      t.table.rows.push_back(std::move(row));
    }
  }
  return t;
}

NamedTable pareto_table(const std::vector<ReportSweep>& sweeps) {
  NamedTable t{"pareto", "Pareto front (throughput, latency, memory)", {}};
  t.table.columns = {"sweep", "configuration", "throughput_tps", "latency_ms", "peak_rss_mib"};
  for (const ReportSweep& s : sweeps) {
    if (!s.recommendation) continue;
    for (size_t i : s.recommendation->pareto_front) {
      const Candidate& c = s.recommendation->candidates[i];
      t.table.rows.push_back({s.name, candidate_label(c),
                              c.throughput_tps ? Cell(c.throughput_tps->value) : Cell(),
                              c.latency_ms ? Cell(c.latency_ms->value) : Cell(), mib(c.peak_rss_bytes)});
    }
  }
  return t;
}

NamedTable trials_table(const std::vector<ReportSweep>& sweeps) {
  NamedTable t{"trials", "All trials", {}};
  t.table.columns = {"sweep",        "trial",         "status",        "model",          "workload",
                     "threads",      "threads_batch", "n_batch",       "n_ubatch",       "n_parallel",
                     "n_ctx",        "type_k",        "type_v",        "flash_attn",     "pp_tps",
                     "pp_tps_ci95",  "tg_tps",        "tg_tps_ci95",   "aggregate_tps",  "aggregate_tps_ci95",
                     "ttft_ms",      "itl_p50_ms",    "itl_p95_ms",    "e2e_ms",         "roofline_pct",
                     "cpu_busy",     "predicted_mib", "measured_mib",  "duration_s",     "reason"};
  for (const ReportSweep& s : sweeps) {
    for (const ReportTrial& r : s.trials) {
      const auto setting = [&](const char* field) -> Cell {
        if (!r.config.is_object() || !r.config.contains(field)) return Cell();
        const auto& v = r.config[field];
        if (v.is_number_integer()) return v.get<int64_t>();
        return v.is_string() ? text(v.get<std::string>()) : text(v.dump());
      };
      t.table.rows.push_back({s.name,
                              r.id,
                              r.status,
                              text(model_name(r)),
                              text(r.workload),
                              setting("threads"),
                              setting("threads_batch"),
                              setting("n_batch"),
                              setting("n_ubatch"),
                              setting("n_parallel"),
                              setting("n_ctx"),
                              setting("type_k"),
                              setting("type_v"),
                              setting("flash_attn"),
                              mean_of(r, metric::kPromptTokensPerSecond),
                              ci_of(r, metric::kPromptTokensPerSecond),
                              mean_of(r, metric::kGenTokensPerSecond),
                              ci_of(r, metric::kGenTokensPerSecond),
                              mean_of(r, metric::kAggregateTokensPerSecond),
                              ci_of(r, metric::kAggregateTokensPerSecond),
                              median_of(r, metric::kTimeToFirstTokenMs),
                              median_of(r, metric::kInterTokenLatencyMs),
                              p95_of(r, metric::kInterTokenLatencyMs),
                              median_of(r, metric::kEndToEndLatencyMs),
                              mean_of(r, metric::kBandwidthPercent),
                              mean_of(r, metric::kCpuBusyShare),
                              mib(r.predicted_rss_bytes),
                              mib(r.peak_rss_bytes),
                              number(r.duration_s),
                              text(r.reason)});
    }
  }
  return t;
}

NamedTable failed_table(const std::vector<ReportSweep>& sweeps) {
  NamedTable t{"failed", "Failed trials", {}};
  t.table.columns = {"sweep", "trial", "status", "configuration", "reason"};
  for (const ReportSweep& s : sweeps) {
    for (const ReportTrial& r : s.trials) {
      if (!r.ok()) t.table.rows.push_back({s.name, r.id, r.status, text(r.key.label), text(r.reason)});
    }
  }
  return t;
}

NamedTable comparison_table(const std::vector<ReportSweep>& sweeps) {
  NamedTable t{"comparison", "Side by side: each configuration's main metric in every sweep", {}};
  t.table.columns = {"configuration", "metric"};
  for (size_t i = 0; i < sweeps.size(); ++i) {
    t.table.columns.push_back(sweeps[i].name);
    if (i > 0) t.table.columns.push_back(fmt::format("ratio {}/{}", i + 1, 1));
  }
  // Configurations in the order they first appear; the value of each sweep's ok trial of that key.
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::string, std::string>> label_metric;  // key -> (label, metric)
  std::map<std::string, std::vector<std::optional<double>>> values;
  for (size_t i = 0; i < sweeps.size(); ++i) {
    for (const ReportTrial& r : sweeps[i].trials) {
      const std::string metric = main_metric(r);
      const SampleSummary* s = r.ok() ? r.metric(metric) : nullptr;
      if (!values.contains(r.key.key)) {
        order.push_back(r.key.key);
        label_metric[r.key.key] = {r.key.label, metric};
        values[r.key.key].resize(sweeps.size());
      }
      if (s) values[r.key.key][i] = s->mean;
    }
  }
  for (const std::string& key : order) {
    const auto& v = values[key];
    std::vector<Cell> row{label_metric[key].first, label_metric[key].second};
    for (size_t i = 0; i < v.size(); ++i) {
      row.push_back(number(v[i]));
      if (i > 0) row.push_back(v[i] && v[0] && *v[0] > 0 ? Cell(*v[i] / *v[0]) : Cell());
    }
    t.table.rows.push_back(std::move(row));
  }
  return t;
}

std::vector<NamedTable> report_tables(const std::vector<ReportSweep>& sweeps) {
  std::vector<NamedTable> tables{sweeps_table(sweeps), recommendations_table(sweeps), pareto_table(sweeps)};
  if (several(sweeps)) tables.push_back(comparison_table(sweeps));
  tables.push_back(trials_table(sweeps));
  tables.push_back(failed_table(sweeps));
  std::erase_if(tables, [](const NamedTable& t) { return t.table.rows.empty() && t.id != "trials"; });
  return tables;
}

}  // namespace infertune
