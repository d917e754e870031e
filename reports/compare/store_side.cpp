#include "reports/compare/store_side.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <map>

#include "reports/store_view/configuration_key.h"

namespace infertune {
namespace {

struct SweepOrigin {
  std::string status;
  std::string build;  // "0.3.0 1a2b3c4"
  std::string host;   // "AMD EPYC ... [fingerprint]"
  std::string fingerprint;
};

Result<SweepOrigin> sweep_origin(ResultsStore& store, int64_t sweep_id) {
  auto query = store.database().prepare(
      "SELECT s.status, b.version, b.git_commit, h.cpu_model, h.fingerprint FROM sweeps AS s "
      "JOIN builds AS b ON b.id = s.build_id JOIN hosts AS h ON h.id = s.host_id WHERE s.id = ?");
  if (!query) return query.error();
  query->bind(1, sweep_id);
  auto row = query->step();
  if (!row) return row.error();
  if (!*row) return fail("{}: no sweep {}", store.database().path().string(), sweep_id);
  return SweepOrigin{query->column_text(0), fmt::format("{} {}", query->column_text(1), query->column_text(2)),
                     fmt::format("{} [{}]", query->column_text(3), query->column_text(4)), query->column_text(4)};
}

Result<std::string> model_hash(ResultsStore& store, std::optional<int64_t> model_id) {
  if (!model_id) return std::string();
  auto query = store.database().prepare("SELECT content_hash FROM models WHERE id = ?");
  if (!query) return query.error();
  query->bind(1, *model_id);
  auto row = query->step();
  if (!row) return row.error();
  return *row ? query->column_text(0) : std::string();
}

// Measured samples by metric, one group per repetition (in the order measured).
std::map<std::string, std::vector<std::vector<double>>> group_samples(const std::vector<Sample>& samples) {
  std::map<std::string, std::map<int64_t, std::vector<double>>> by_repetition;
  for (const Sample& s : samples) {
    if (!s.is_warmup) by_repetition[s.metric][s.repetition].push_back(s.value);
  }
  std::map<std::string, std::vector<std::vector<double>>> groups;
  for (auto& [metric, repetitions] : by_repetition) {
    for (auto& [repetition, values] : repetitions) groups[metric].push_back(std::move(values));
  }
  return groups;
}

Result<MeasuredConfiguration> read_trial(ResultsStore& store, const StoredTrial& stored) {
  const nlohmann::json config = nlohmann::json::parse(stored.trial.config_json, nullptr, false);
  if (config.is_discarded()) return fail("trial {}: its config is not JSON", stored.id);
  auto hash = model_hash(store, stored.trial.model_id);
  if (!hash) return hash.error();
  const ConfigurationKey key = configuration_key(config, *hash);
  MeasuredConfiguration c;
  c.key = key.key;
  c.label = key.label;
  c.ok = stored.trial.status == TrialStatus::ok;
  if (!c.ok) {
    c.failure = std::string(to_string(stored.trial.status));
    if (!stored.trial.reason.empty()) c.failure += ": " + stored.trial.reason;
  }
  auto samples = store.samples(stored.id);
  if (!samples) return samples.error();
  c.groups = group_samples(*samples);
  return c;
}

}  // namespace

StoreSelection parse_store_selection(std::string_view text) {
  std::error_code error;
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || std::filesystem::exists(std::filesystem::path(text), error)) {
    return {std::filesystem::path(text), std::nullopt};
  }
  const std::string_view number = text.substr(colon + 1);
  int64_t sweep = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), sweep);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size()) {
    return {std::filesystem::path(text), std::nullopt};
  }
  return {std::filesystem::path(text.substr(0, colon)), sweep};
}

Result<MeasuredSide> read_sweep_side(ResultsStore& store, int64_t sweep_id, const std::string& name) {
  const std::string file = store.database().path().string();
  auto origin = sweep_origin(store, sweep_id);
  if (!origin) return origin.error();
  auto trials = store.trials(sweep_id);
  if (!trials) return trials.error();
  MeasuredSide side;
  side.name = name;
  side.description = fmt::format("{} sweep {} (build {}, host {})", file, sweep_id, origin->build, origin->host);
  side.host_fingerprint = origin->fingerprint;
  if (origin->status != "done") {
    side.notes.push_back(fmt::format("{}: the {}'s sweep {} is {}", file, name, sweep_id, origin->status));
  }
  std::map<std::string, int64_t> trial_of_key;
  for (const StoredTrial& stored : *trials) {
    auto configuration = read_trial(store, stored);
    if (!configuration) return fail("{}: {}", file, configuration.error().message);
    auto [it, inserted] = trial_of_key.emplace(configuration->key, stored.id);
    if (!inserted) {
      side.notes.push_back(fmt::format("{}: {} sweep {}: trials {} and {} are the same configuration ({}); only "
                                       "trial {} is compared",
                                       file, name, sweep_id, it->second, stored.id, configuration->label, it->second));
      continue;
    }
    side.configurations.push_back(std::move(*configuration));
  }
  return side;
}

Result<MeasuredSide> load_store_side(const StoreSelection& selection, const std::string& name) {
  auto store = ResultsStore::open_read_only(selection.path);
  if (!store) return fail("{}: {}", name, store.error().message);
  int64_t sweep_id = 0;
  if (selection.sweep) {
    sweep_id = *selection.sweep;
  } else {
    auto latest = store->latest_sweep_id();
    if (!latest) return latest.error();
    if (!*latest) return fail("{}: {} has no sweep", name, selection.path.string());
    sweep_id = **latest;
  }
  auto found = store->find_sweep(sweep_id);
  if (!found) return found.error();
  if (!*found) return fail("{}: {} has no sweep {}", name, selection.path.string(), sweep_id);
  return read_sweep_side(*store, sweep_id, name);
}

}  // namespace infertune
