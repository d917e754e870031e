#include "sweeps/run/sweep_records.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "sweeps/store/stable_hash.h"
#include "sweeps/store/time_text.h"

namespace infertune {

Result<ModelRecord> model_record(const std::string& path) {
  auto file = GgufFile::open(path);
  if (!file) return fail("model '{}': {}", path, file.error().message);
  auto hash = file_content_hash(path);
  if (!hash) return hash.error();
  ModelRecord model;
  model.content_hash = *hash;
  model.path = path;
  if (auto arch = file->get_string("general.architecture")) model.arch = std::string(*arch);
  model.file_bytes = static_cast<int64_t>(file->file_size());
  // Bytes of tensor data per weight type, and all elements as the parameter count.
  std::map<std::string, int64_t> bytes_by_type;
  int64_t n_params = 0;
  for (const GgufTensorInfo& t : file->tensors()) {
    bytes_by_type[std::string(ggml_type_name(t.type))] += static_cast<int64_t>(t.n_bytes);
    n_params += static_cast<int64_t>(t.n_elements);
  }
  model.n_params = n_params;
  model.type_mix_json = nlohmann::json(bytes_by_type).dump();
  return model;
}

TrialRecord skipped_trial_record(int64_t sweep_id, const PlannedTrial& trial, std::optional<int64_t> model_id) {
  TrialRecord r;
  r.sweep_id = sweep_id;
  r.config_hash = trial.hash;
  r.config_json = trial.config.dump();
  r.model_id = model_id;
  r.status = TrialStatus::skipped;
  r.reason = trial.skip_reason;
  if (trial.memory) r.predicted_peak_rss_bytes = static_cast<int64_t>(trial.memory->total());
  r.started_at = utc_now_text();
  r.finished_at = r.started_at;
  return r;
}

TrialRecord finished_trial_record(int64_t sweep_id, const TrialOutcome& outcome, std::optional<int64_t> model_id) {
  const PlannedTrial& trial = *outcome.trial;
  TrialRecord r;
  r.sweep_id = sweep_id;
  r.config_hash = trial.hash;
  r.config_json = trial.config.dump();
  r.model_id = model_id;
  r.status = outcome.status;
  r.reason = outcome.reason;
  if (trial.memory) r.predicted_peak_rss_bytes = static_cast<int64_t>(trial.memory->total());
  r.peak_rss_bytes = outcome.measurement.peak_rss_bytes;
  r.started_at = outcome.started_at;
  r.finished_at = outcome.finished_at;
  r.duration_s = outcome.duration_s;
  r.samples = outcome.measurement.samples;
  return r;
}

std::string spec_text_yaml(const SpecText& text) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  for (const auto& [key, entry] : text.entries) {
    if (entry.values.empty()) continue;
    // Quoted, so "0x0", "1-4" and "on" stay the text they were.
    out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& v : entry.values) out << YAML::DoubleQuoted << v;
    out << YAML::EndSeq;
  }
  if (!text.workloads.empty()) {
    out << YAML::Key << "workloads" << YAML::Value << YAML::BeginSeq;
    for (const auto& w : text.workloads) {
      out << YAML::Flow << YAML::BeginMap;
      for (const auto& [field, value] : w.fields)
        out << YAML::Key << field << YAML::Value << YAML::DoubleQuoted << value;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

namespace {

SpecText::WorkloadText workload_text(const Workload& w) {
  SpecText::WorkloadText t;
  t.where = "workloads";
  const auto count = [](int n) { return fmt::format("{}", n); };
  if (w.kind == WorkloadKind::Batched) {
    t.fields = {{"np", count(w.n_parallel)}, {"pp", count(w.n_prompt)}, {"tg", count(w.n_gen)}};
    return t;
  }
  if (w.kind == WorkloadKind::Serve) {
    t.fields = {{"clients", count(w.clients)}, {"pp", count(w.n_prompt)}, {"tg", count(w.n_gen)}};
    const auto ms = [](double v) { return fmt::format("{}ms", v); };
    if (w.slo_ttft_ms > 0) t.fields["slo_ttft"] = ms(w.slo_ttft_ms);
    if (w.slo_itl_ms > 0) t.fields["slo_itl"] = ms(w.slo_itl_ms);
    return t;
  }
  if (w.kind != WorkloadKind::Generate) t.fields["pp"] = count(w.n_prompt);
  if (w.kind != WorkloadKind::Prompt) t.fields["tg"] = count(w.n_gen);
  if (w.depth != 0) t.fields["depth"] = count(w.depth);
  return t;
}

}  // namespace

SpecText spec_text_of(const SweepSpec& s) {
  SpecText t;
  const auto put = [&t](const std::string& key, std::vector<std::string> values) {
    if (!values.empty()) t.entries[key] = SpecEntry{.values = std::move(values), .where = key};
  };
  put("models", s.models);
  if (!s.base_model.empty()) put("base_model", {s.base_model});
  put("quant_types", s.quant_types);
  for (const auto& [key, values] : s.settings) put(key, values);  // canonical text already
  for (const Workload& w : s.workloads) t.workloads.push_back(workload_text(w));
  if (s.max_mem_bytes) put("max_mem", {fmt::format("{}", *s.max_mem_bytes)});
  if (s.min_ctx != 0) put("min_ctx", {fmt::format("{}", s.min_ctx)});
  if (s.time_budget_s) put("time_budget", {fmt::format("{}", *s.time_budget_s)});
  switch (s.order) {
    case TrialOrder::Grouped:
      put("order", {"grouped"});
      break;
    case TrialOrder::Interleaved:
      put("order", {"interleaved"});
      break;
    case TrialOrder::Random:
      put("order", {fmt::format("random:{}", s.seed)});
      break;
  }
  return t;
}

}  // namespace infertune
