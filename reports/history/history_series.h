#pragma once
// The history of configurations across builds: for each configuration (configuration_key.h: the same
// settings and model bytes, whatever sweep, build or model path) measured on one host, the trials of every
// sweep in the order the sweeps started, with the build each ran with, its raw samples of one metric, and
// where the level changed (change_points.h): the build that brought a regression or an improvement.
//
// Hosts are never mixed: the same configuration on two hosts is two series. `infertune history` prints the
// series; `infertune report` draws them with their change points marked. Both read through load_history:
//
//   auto store = ResultsStore::open_read_only(path);
//   auto series = load_history(*store, HistoryQuery{});   // every configuration, its main metric
//   for (const HistorySeries& s : *series)
//     for (const HistoryChange& c : s.changes) ... s.points[c.index] is the first build after the change
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/result.h"
#include "reports/history/change_points.h"
#include "reports/store_view/configuration_key.h"
#include "sweeps/store/results_store.h"

namespace infertune {

struct HistoryQuery {
  std::string metric;            // a stored metric name ("tg_tps"); "": each configuration's main metric
  std::string config_substring;  // "": every configuration; else only those whose label or key contains it
  std::string host_prefix;       // "": every host; else only fingerprints starting with it
  ChangePointOptions detection;
};

// One trial of the configuration: one sweep, one build.
struct HistoryPoint {
  int64_t sweep_id = 0;
  int64_t trial_id = 0;
  std::string time;  // the sweep's start, UTC "2025-06-01T12:00:00.123Z" (the order of the points)
  int64_t build_id = 0;
  std::string git_commit;  // "-dirty" suffix when the tree had changes
  std::string version;
  TrialStatus status = TrialStatus::ok;
  std::string reason;                    // why it is not ok
  std::vector<double> samples;           // raw non-warmup samples of the metric in measured order; empty when failed
  std::optional<SampleSummary> summary;  // of samples (median, mean, ci95_half_width of the mean, ...)

  bool measured() const { return summary.has_value(); }
};

enum class ChangeDirection { regression, improvement };
std::string_view to_string(ChangeDirection direction);

struct HistoryChange : ChangePoint {  // index: into HistorySeries::points
  ChangeDirection direction = ChangeDirection::regression;
};

struct HistorySeries {
  ConfigurationKey configuration;  // key (match on it) and label (show it)
  std::string host_fingerprint;
  std::string host_cpu_model;
  std::string metric;  // stored metric name, e.g. "tg_tps"
  bool higher_is_better = true;
  std::vector<HistoryPoint> points;    // by sweep start time (then sweep id); failed trials included
  std::vector<HistoryChange> changes;  // by index; detected on the measured points only
};

// Every series matching the query, ordered by host (as first seen), then configuration label. A series
// needs at least one measured point (a configuration that only ever failed, or never had samples of the
// metric, is left out). Errors name the store: no trials at all, nothing matching the filters, SQL errors.
Result<std::vector<HistorySeries>> load_history(ResultsStore& store, const HistoryQuery& query);

}  // namespace infertune
