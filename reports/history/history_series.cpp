#include "reports/history/history_series.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "reports/history/history_metrics.h"

namespace infertune {
namespace {

// Every trial with its sweep's time, build and host, in the order the series list their points.
constexpr const char* kTrialsSql =
    "SELECT t.id, t.sweep_id, t.config, t.status, coalesce(t.reason, ''), coalesce(m.content_hash, ''),"
    " s.started_at, s.build_id, b.git_commit, b.version, s.host_id, h.fingerprint, h.cpu_model"
    " FROM trials AS t"
    " JOIN sweeps AS s ON s.id = t.sweep_id"
    " JOIN builds AS b ON b.id = s.build_id"
    " JOIN hosts AS h ON h.id = s.host_id"
    " LEFT JOIN models AS m ON m.id = t.model_id"
    " ORDER BY s.host_id, s.started_at, s.id, t.id";

constexpr const char* kSamplesSql =
    "SELECT value FROM samples WHERE trial_id = ? AND metric = ? AND is_warmup = 0 ORDER BY id";

struct SeriesSlot {
  int64_t host_id = 0;
  HistorySeries series;
};

using SeriesId = std::tuple<int64_t, std::string, std::string>;  // host id, configuration key, metric

bool matches(const HistoryQuery& query, const ConfigurationKey& key, const std::string& fingerprint) {
  if (!fingerprint.starts_with(query.host_prefix)) return false;
  if (query.config_substring.empty()) return true;
  return key.label.find(query.config_substring) != std::string::npos ||
         key.key.find(query.config_substring) != std::string::npos;
}

HistoryPoint point_from_row(const Statement& row) {
  HistoryPoint p;
  p.trial_id = row.column_int(0);
  p.sweep_id = row.column_int(1);
  p.status = parse_trial_status(row.column_text(3)).value_or(TrialStatus::failed);
  p.reason = row.column_text(4);
  p.time = row.column_text(6);
  p.build_id = row.column_int(7);
  p.git_commit = row.column_text(8);
  p.version = row.column_text(9);
  return p;
}

Status read_samples(Statement& query, const std::string& metric, HistoryPoint& point) {
  query.reset();
  query.bind(1, point.trial_id).bind(2, metric);
  for (;;) {
    auto row = query.step();
    if (!row) return row.error();
    if (!*row) break;
    point.samples.push_back(query.column_double(0));
  }
  if (point.samples.empty()) return {};
  auto summary = summarize(point.samples);
  if (!summary) return fail("trial {}, metric {}: {}", point.trial_id, metric, summary.error().message);
  point.summary = *summary;
  return {};
}

// Reads every matching trial into its series (host, configuration, metric), points in time order.
Result<std::vector<SeriesSlot>> read_series(ResultsStore& store, const HistoryQuery& query) {
  auto trials = store.database().prepare(kTrialsSql);
  if (!trials) return trials.error();
  auto samples = store.database().prepare(kSamplesSql);
  if (!samples) return samples.error();
  std::vector<SeriesSlot> slots;
  std::map<SeriesId, size_t> slot_of;
  for (;;) {
    auto row = trials->step();
    if (!row) return row.error();
    if (!*row) break;
    const nlohmann::json config = nlohmann::json::parse(trials->column_text(2), nullptr, false);
    if (!config.is_object()) continue;  // not a trial config the sweep runner writes
    const ConfigurationKey key = configuration_key(config, trials->column_text(5));
    const std::string fingerprint = trials->column_text(11);
    if (!matches(query, key, fingerprint)) continue;
    const std::string metric = query.metric.empty() ? main_metric_of(config) : query.metric;
    const SeriesId id{trials->column_int(10), key.key, metric};
    auto [it, added] = slot_of.try_emplace(id, slots.size());
    if (added) {
      SeriesSlot& slot = slots.emplace_back();
      slot.host_id = std::get<0>(id);
      slot.series = {key, fingerprint, trials->column_text(12), metric, higher_is_better(metric), {}, {}};
    }
    HistoryPoint point = point_from_row(*trials);
    if (point.status == TrialStatus::ok) {
      if (Status s = read_samples(*samples, metric, point); !s) return s.error();
    }
    slots[it->second].series.points.push_back(std::move(point));
  }
  return slots;
}

std::vector<HistoryChange> changes_of(const HistorySeries& series, const ChangePointOptions& options) {
  std::vector<std::vector<double>> samples;
  for (const HistoryPoint& p : series.points) samples.push_back(p.samples);
  std::vector<HistoryChange> changes;
  for (const ChangePoint& c : detect_change_points(samples, options)) {
    HistoryChange change;
    static_cast<ChangePoint&>(change) = c;
    const bool rose = c.relative_change > 0;
    change.direction = rose == series.higher_is_better ? ChangeDirection::improvement : ChangeDirection::regression;
    changes.push_back(change);
  }
  return changes;
}

}  // namespace

std::string_view to_string(ChangeDirection direction) {
  return direction == ChangeDirection::regression ? "regression" : "improvement";
}

Result<std::vector<HistorySeries>> load_history(ResultsStore& store, const HistoryQuery& query) {
  auto slots = read_series(store, query);
  if (!slots) return fail("results store {}: {}", store.database().path().string(), slots.error().message);
  std::stable_sort(slots->begin(), slots->end(), [](const SeriesSlot& a, const SeriesSlot& b) {
    return std::tie(a.host_id, a.series.configuration.label, a.series.configuration.key) <
           std::tie(b.host_id, b.series.configuration.label, b.series.configuration.key);
  });
  std::vector<HistorySeries> result;
  for (SeriesSlot& slot : *slots) {
    HistorySeries& s = slot.series;
    if (std::none_of(s.points.begin(), s.points.end(), [](const HistoryPoint& p) { return p.measured(); })) continue;
    s.changes = changes_of(s, query.detection);
    result.push_back(std::move(s));
  }
  return result;
}

}  // namespace infertune
