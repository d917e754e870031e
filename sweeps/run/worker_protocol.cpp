#include "sweeps/run/worker_protocol.h"

#include <array>
#include <cmath>
#include <limits>
#include <optional>

namespace infertune {

namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 6> kEventNames{"loaded",     "load_failed",  "trial_started",
                                                      "trial_done", "trial_failed", "group_done"};

// Reasons and paths may carry bytes that are not UTF-8 (a worker's stderr); they are replaced, not thrown on.
std::string dump_line(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// A short quote of a line for error messages: enough to recognise it, never a whole megabyte.
std::string quote(std::string_view line) {
  constexpr size_t kMax = 200;
  if (line.size() <= kMax) return std::string(line);
  return std::string(line.substr(0, kMax)) + "...";
}

Result<const json*> member(const json& j, const char* name, json::value_t type, const char* type_name) {
  if (!j.is_object()) return fail("expected an object");
  auto it = j.find(name);
  if (it == j.end()) return fail("missing field '{}'", name);
  const bool number_ok = type == json::value_t::number_float && it->is_number();
  const bool integer_ok = type == json::value_t::number_integer && it->is_number_integer();
  if (it->type() != type && !number_ok && !integer_ok) return fail("field '{}' is not {}", name, type_name);
  return &*it;
}

Result<std::string> string_field(const json& j, const char* name) {
  auto m = member(j, name, json::value_t::string, "a string");
  if (!m) return m.error();
  return (*m)->get<std::string>();
}

Result<int64_t> integer_field(const json& j, const char* name) {
  auto m = member(j, name, json::value_t::number_integer, "an integer");
  if (!m) return m.error();
  return (*m)->get<int64_t>();
}

Result<double> number_field(const json& j, const char* name) {
  auto m = member(j, name, json::value_t::number_float, "a number");
  if (!m) return m.error();
  return (*m)->get<double>();
}

Result<bool> bool_field(const json& j, const char* name) {
  auto m = member(j, name, json::value_t::boolean, "a boolean");
  if (!m) return m.error();
  return (*m)->get<bool>();
}

json sample_to_json(const Sample& s) {
  // JSON has no NaN or infinity; null stands for "not a number" and reads back as NaN.
  json value = std::isfinite(s.value) ? json(s.value) : json(nullptr);
  return {{"metric", s.metric}, {"repetition", s.repetition}, {"value", value}, {"is_warmup", s.is_warmup}};
}

Result<Sample> sample_from_json(const json& j) {
  Sample s;
  auto metric = string_field(j, "metric");
  if (!metric) return metric.error();
  auto repetition = integer_field(j, "repetition");
  if (!repetition) return repetition.error();
  auto warmup = bool_field(j, "is_warmup");
  if (!warmup) return warmup.error();
  s.metric = *metric;
  s.repetition = *repetition;
  s.is_warmup = *warmup;
  if (j.contains("value") && j["value"].is_null()) {
    s.value = std::numeric_limits<double>::quiet_NaN();
  } else {
    auto value = number_field(j, "value");
    if (!value) return value.error();
    s.value = *value;
  }
  return s;
}

json environment_to_json(const TrialEnvironment& e) {
  return {{"host_read_bandwidth_gbs", e.host_read_bandwidth_gbs ? json(*e.host_read_bandwidth_gbs) : json(nullptr)}};
}

Result<TrialEnvironment> environment_from_json(const json& j) {
  TrialEnvironment e;
  if (!j.is_object()) return fail("'environment' is not an object");
  auto it = j.find("host_read_bandwidth_gbs");
  if (it != j.end() && !it->is_null()) {
    if (!it->is_number()) return fail("'environment.host_read_bandwidth_gbs' is not a number");
    e.host_read_bandwidth_gbs = it->get<double>();
  }
  return e;
}

Result<WorkerTrial> trial_from_json(const json& j, size_t position) {
  WorkerTrial t;
  auto index = integer_field(j, "index");
  auto hash = string_field(j, "hash");
  if (!index) return fail("trials[{}]: {}", position, index.error().message);
  if (*index < 0) return fail("trials[{}]: 'index' is negative", position);
  if (!hash) return fail("trials[{}]: {}", position, hash.error().message);
  if (!j.contains("config") || !j["config"].is_object()) return fail("trials[{}]: 'config' is not an object", position);
  t.index = static_cast<size_t>(*index);
  t.hash = *hash;
  t.config = j["config"];
  return t;
}

Result<WorkerRequest> request_from_json(const json& j) {
  WorkerRequest r;
  if (!j.is_object()) return fail("not a JSON object");
  auto path = string_field(j, "model_path");
  if (!path) return path.error();
  r.model_path = *path;
  if (!j.contains("group_key") || !j["group_key"].is_object()) return fail("'group_key' is not an object");
  r.group_key = j["group_key"];
  if (!j.contains("trials") || !j["trials"].is_array()) return fail("'trials' is not an array");
  for (size_t i = 0; i < j["trials"].size(); ++i) {
    auto t = trial_from_json(j["trials"][i], i);
    if (!t) return t.error();
    r.trials.push_back(std::move(*t));
  }
  if (j.contains("llama_cpp_bin")) {
    auto bin = string_field(j, "llama_cpp_bin");
    if (!bin) return bin.error();
    r.llama_cpp_bin = *bin;
  }
  if (!j.contains("settings")) return fail("missing field 'settings'");
  auto settings = TrialSettings::from_json(j["settings"]);
  if (!settings) return fail("'settings': {}", settings.error().message);
  r.settings = *settings;
  if (!j.contains("environment")) return fail("missing field 'environment'");
  auto environment = environment_from_json(j["environment"]);
  if (!environment) return environment.error();
  r.environment = *environment;
  return r;
}

std::optional<WorkerEventKind> event_kind(std::string_view name) {
  for (size_t i = 0; i < kEventNames.size(); ++i) {
    if (kEventNames[i] == name) return static_cast<WorkerEventKind>(i);
  }
  return std::nullopt;
}

Result<WorkerEvent> event_from_json(const json& j) {
  auto name = string_field(j, "event");
  if (!name) return name.error();
  auto kind = event_kind(*name);
  if (!kind) return fail("unknown event '{}'", *name);
  WorkerEvent e;
  e.kind = *kind;
  if (e.kind == WorkerEventKind::trial_started || e.kind == WorkerEventKind::trial_done ||
      e.kind == WorkerEventKind::trial_failed) {
    auto hash = string_field(j, "hash");
    if (!hash) return hash.error();
    e.hash = *hash;
  }
  if (e.kind == WorkerEventKind::load_failed || e.kind == WorkerEventKind::trial_failed) {
    auto reason = string_field(j, "reason");
    if (!reason) return reason.error();
    e.reason = *reason;
  }
  if (e.kind == WorkerEventKind::loaded) {
    auto load_ms = number_field(j, "load_ms");
    if (!load_ms) return load_ms.error();
    e.load_ms = *load_ms;
  }
  if (e.kind == WorkerEventKind::trial_failed) {
    auto status = string_field(j, "status");
    if (!status) return status.error();
    auto parsed = parse_trial_status(*status);
    if (!parsed || *parsed == TrialStatus::ok || *parsed == TrialStatus::skipped) {
      return fail("'status' '{}' is not a failure status", *status);
    }
    e.status = *parsed;
  }
  if (e.kind == WorkerEventKind::trial_done) {
    if (!j.contains("measurement")) return fail("missing field 'measurement'");
    auto m = measurement_from_json(j["measurement"]);
    if (!m) return fail("'measurement': {}", m.error().message);
    e.measurement = std::move(*m);
  }
  return e;
}

}  // namespace

std::string_view to_string(WorkerEventKind kind) { return kEventNames[static_cast<size_t>(kind)]; }

json measurement_to_json(const TrialMeasurement& m) {
  json samples = json::array();
  for (const Sample& s : m.samples) samples.push_back(sample_to_json(s));
  return {{"samples", std::move(samples)},
          {"peak_rss_bytes", m.peak_rss_bytes ? json(*m.peak_rss_bytes) : json(nullptr)},
          {"repetitions", m.repetitions},
          {"ci_target_met", m.ci_target_met},
          {"main_metric", m.main_metric}};
}

Result<TrialMeasurement> measurement_from_json(const json& j) {
  TrialMeasurement m;
  auto samples = member(j, "samples", json::value_t::array, "an array");
  if (!samples) return samples.error();
  for (size_t i = 0; i < (*samples)->size(); ++i) {
    auto s = sample_from_json((**samples)[i]);
    if (!s) return fail("samples[{}]: {}", i, s.error().message);
    m.samples.push_back(std::move(*s));
  }
  if (auto it = j.find("peak_rss_bytes"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer()) return fail("field 'peak_rss_bytes' is not an integer");
    m.peak_rss_bytes = it->get<int64_t>();
  }
  auto repetitions = integer_field(j, "repetitions");
  if (!repetitions) return repetitions.error();
  auto met = bool_field(j, "ci_target_met");
  if (!met) return met.error();
  auto main_metric = string_field(j, "main_metric");
  if (!main_metric) return main_metric.error();
  m.repetitions = static_cast<int>(*repetitions);
  m.ci_target_met = *met;
  m.main_metric = *main_metric;
  return m;
}

std::string encode_request(const WorkerRequest& r) {
  json trials = json::array();
  for (const WorkerTrial& t : r.trials) trials.push_back({{"index", t.index}, {"hash", t.hash}, {"config", t.config}});
  json j{{"model_path", r.model_path},
         {"group_key", r.group_key},
         {"trials", std::move(trials)},
         {"settings", r.settings.to_json()},
         {"environment", environment_to_json(r.environment)}};
  if (!r.llama_cpp_bin.empty()) j["llama_cpp_bin"] = r.llama_cpp_bin;
  return dump_line(j);
}

Result<WorkerRequest> decode_request(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return fail("sweep worker request is not JSON: '{}'", quote(text));
  auto r = request_from_json(j);
  if (!r) return fail("sweep worker request: {}", r.error().message);
  return r;
}

std::string encode_event(const WorkerEvent& e) {
  json j{{"event", to_string(e.kind)}};
  switch (e.kind) {
    case WorkerEventKind::loaded:
      j["load_ms"] = e.load_ms;
      break;
    case WorkerEventKind::load_failed:
      j["reason"] = e.reason;
      break;
    case WorkerEventKind::trial_started:
      j["hash"] = e.hash;
      break;
    case WorkerEventKind::trial_done:
      j["hash"] = e.hash;
      j["measurement"] = measurement_to_json(e.measurement);
      break;
    case WorkerEventKind::trial_failed:
      j["hash"] = e.hash;
      j["status"] = to_string(e.status);
      j["reason"] = e.reason;
      break;
    case WorkerEventKind::group_done:
      break;
  }
  return dump_line(j);
}

Result<WorkerEvent> decode_event(std::string_view line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return fail("worker output line is not JSON: '{}'", quote(line));
  auto e = event_from_json(j);
  if (!e) return fail("worker output line '{}': {}", quote(line), e.error().message);
  return e;
}

}  // namespace infertune
