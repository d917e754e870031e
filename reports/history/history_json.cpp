// `infertune history -o json`: one document with every series, its points and its change points, for CI
// jobs and scripts. Field names are part of the interface (README, "history"): add fields, never rename.
#include "reports/history/history_metrics.h"
#include "reports/history/history_output.h"

namespace infertune {
namespace {

nlohmann::json or_null(const std::optional<double>& value) { return value ? nlohmann::json(*value) : nullptr; }

nlohmann::json point_json(const HistorySeries& s, size_t i, const std::optional<double>& vs_previous) {
  const HistoryPoint& p = s.points[i];
  nlohmann::json j{{"sweep_id", p.sweep_id},
                   {"trial_id", p.trial_id},
                   {"time", p.time},
                   {"build_id", p.build_id},
                   {"commit", p.git_commit},
                   {"version", p.version},
                   {"status", to_string(p.status)},
                   {"reason", p.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.reason)}};
  j["n"] = p.measured() ? p.summary->n : 0;
  j["median"] = p.measured() ? nlohmann::json(p.summary->median) : nullptr;
  j["mean"] = p.measured() ? nlohmann::json(p.summary->mean) : nullptr;
  j["ci95_half_width"] = p.measured() ? or_null(p.summary->ci95_half_width) : nullptr;
  j["change_vs_previous"] = or_null(vs_previous);
  j["change_point"] = change_at(s, i) != nullptr;
  return j;
}

nlohmann::json change_json(const HistorySeries& s, const HistoryChange& c) {
  const HistoryPoint& p = s.points[c.index];
  return {{"index", c.index},
          {"time", p.time},
          {"commit", p.git_commit},
          {"version", p.version},
          {"before", c.before_level},
          {"after", c.after_level},
          {"relative_change", c.relative_change},
          {"p_value", c.p_value},
          {"direction", to_string(c.direction)}};
}

nlohmann::json series_json(const HistorySeries& s) {
  nlohmann::json points = nlohmann::json::array();
  const auto vs_previous = change_from_previous(s);
  for (size_t i = 0; i < s.points.size(); ++i) points.push_back(point_json(s, i, vs_previous[i]));
  nlohmann::json changes = nlohmann::json::array();
  for (const HistoryChange& c : s.changes) changes.push_back(change_json(s, c));
  return {{"configuration", s.configuration.label},
          {"configuration_key", nlohmann::json::parse(s.configuration.key, nullptr, false)},
          {"host", s.host_fingerprint},
          {"cpu_model", s.host_cpu_model},
          {"metric", s.metric},
          {"unit", metric_unit(s.metric)},
          {"higher_is_better", s.higher_is_better},
          {"points", std::move(points)},
          {"changes", std::move(changes)}};
}

}  // namespace

nlohmann::json history_json(const std::vector<HistorySeries>& series, const HistoryOutput& about) {
  nlohmann::json all = nlohmann::json::array();
  size_t changes = 0;
  size_t regressions = 0;
  for (const HistorySeries& s : series) {
    all.push_back(series_json(s));
    changes += s.changes.size();
    for (const HistoryChange& c : s.changes) regressions += c.direction == ChangeDirection::regression;
  }
  return {{"store", about.store},
          {"metric", about.metric_choice.empty() ? nlohmann::json(nullptr) : nlohmann::json(about.metric_choice)},
          {"min_change", about.detection.min_relative_change},
          {"alpha", about.detection.alpha},
          {"permutations", about.detection.permutations},
          {"series", std::move(all)},
          {"summary",
           {{"series", series.size()},
            {"changes", changes},
            {"regressions", regressions},
            {"improvements", changes - regressions},
            {"hidden_series", about.hidden_series}}}};
}

}  // namespace infertune
