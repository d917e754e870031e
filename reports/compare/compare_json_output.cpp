// The JSON of a comparison, the format choice and the number formats the renderers share
// (compare_output.h).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "reports/compare/compare_output.h"

namespace infertune {
namespace {

using Json = nlohmann::ordered_json;

Json optional_number(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? Json(*value) : Json(nullptr);
}

Json interval_json(const std::optional<Interval>& interval) {
  if (!interval) return nullptr;
  return Json::array({interval->low, interval->high});
}

Json side_json(const SideFigures& f) {
  return Json{{"groups", f.groups}, {"values", f.values}, {"median", f.values ? Json(f.median) : Json(nullptr)}};
}

Json metric_json(const CompareMetric& m) {
  return Json{{"name", m.name}, {"store_name", m.store_name}, {"unit", m.unit}, {"higher_is_better", m.higher_is_better}};
}

Json comparison_json(const MetricComparison& c) {
  return Json{
      {"label", c.label},
      {"configuration_key", c.key},
      {"metric", metric_json(c.metric)},
      {"baseline", side_json(c.baseline)},
      {"candidate", side_json(c.candidate)},
      {"ratio", optional_number(c.ratio)},
      {"ratio_ci95", interval_json(c.ratio_interval)},
      {"change_pct", c.ratio ? Json((*c.ratio - 1) * 100) : Json(nullptr)},
      {"worse_pct", c.ratio ? Json(worsening_of(*c.ratio, c.metric.higher_is_better) * 100) : Json(nullptr)},
      {"test", c.test},
      {"p_value", optional_number(c.p_value)},
      {"threshold_pct", c.threshold * 100},
      {"verdict", verdict_name(c.verdict)},
      {"note", c.note},
  };
}

}  // namespace

std::optional<CompareFormat> parse_compare_format(std::string_view name) {
  if (name == "table") return CompareFormat::table;
  if (name == "md" || name == "markdown") return CompareFormat::markdown;
  if (name == "json") return CompareFormat::json;
  return std::nullopt;
}

std::string change_text(double ratio) { return fmt::format("{:+.1f}%", (ratio - 1) * 100); }

std::string interval_text(const std::optional<Interval>& ratio_interval) {
  if (!ratio_interval) return "[-]";
  return fmt::format("[{:+.1f}%, {:+.1f}%]", (ratio_interval->low - 1) * 100, (ratio_interval->high - 1) * 100);
}

std::string p_value_text(const std::optional<double>& p) {
  if (!p) return "-";
  if (*p < 0.0001) return "<0.0001";
  return fmt::format("{:.4f}", *p);
}

std::string value_text(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude >= 100) return fmt::format("{:.1f}", value);
  if (magnitude >= 1) return fmt::format("{:.2f}", value);
  return fmt::format("{:.4g}", value);
}

std::string threshold_text(double fraction) { return fmt::format("{:g}%", std::round(fraction * 1000) / 10); }

std::string format_compare_json(const ComparisonReport& r) {
  Json doc;
  doc["format"] = "infertune-compare/1";
  doc["mode"] = r.mode;
  doc["verdict"] = verdict_name(r.verdict);
  doc["exit_status"] = exit_status_of(r.verdict);
  doc["baseline"] = r.baseline_side.description;
  doc["candidate"] = r.candidate_side.description;
  Json thresholds = Json::object();
  for (const CompareMetric& m : r.settings.metrics) thresholds[std::string(m.name)] = threshold_for(r.settings, m) * 100;
  doc["threshold_pct"] = thresholds;
  doc["threshold_source"] = r.threshold_source;
  doc["statistics"] = Json{
      {"design", r.settings.design == CompareDesign::paired_blocks ? "paired ABBA blocks" : "independent samples"},
      {"confidence", r.settings.confidence},
      {"interval", r.settings.design == CompareDesign::paired_blocks
                       ? "Hodges-Lehmann with the signed-rank interval over the log ratios of adjacent block pairs"
                       : "percentile bootstrap of the ratio of medians, repetitions resampled"},
      {"resamples", r.settings.resamples},
      {"seed", r.settings.seed},
      {"rank_test",
       r.settings.design == CompareDesign::paired_blocks ? "Wilcoxon signed-rank" : "Mann-Whitney U"},
  };
  Json means = Json::array();
  for (const GeometricMean& g : r.geometric_means) {
    means.push_back(Json{{"metric", metric_json(g.metric)},
                         {"configurations", g.configurations},
                         {"ratio", g.ratio},
                         {"ratio_ci95", interval_json(g.ratio_interval)},
                         {"change_pct", (g.ratio - 1) * 100},
                         {"threshold_pct", g.threshold * 100},
                         {"verdict", verdict_name(g.verdict)},
                         {"counts_in_overall", g.configurations >= 2}});
  }
  doc["geometric_means"] = means;
  Json rows = Json::array();
  for (const MetricComparison& c : r.comparisons) rows.push_back(comparison_json(c));
  doc["comparisons"] = rows;
  Json unmatched = Json::array();
  for (const UnmatchedConfiguration& u : r.unmatched) {
    unmatched.push_back(Json{{"label", u.label}, {"configuration_key", u.key}, {"reason", u.reason}});
  }
  doc["unmatched"] = unmatched;
  doc["notes"] = r.notes;
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string format_compare(const ComparisonReport& report, CompareFormat format) {
  switch (format) {
    case CompareFormat::table: return format_compare_table(report);
    case CompareFormat::markdown: return format_compare_markdown(report);
    case CompareFormat::json: return format_compare_json(report);
  }
  return "";
}

}  // namespace infertune
