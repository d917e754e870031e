#pragma once
// What `infertune history` prints: per series a table of its builds in time order (time, commit, median
// with the 95% CI, the change from the previous build, change points marked) and its change points, then a
// summary of every change point. As aligned text, Markdown, or one JSON document.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/history/history_series.h"

namespace infertune {

enum class HistoryFormat { table, markdown, json };
std::optional<HistoryFormat> parse_history_format(std::string_view name);  // "table", "md", "json"

struct HistoryOutput {
  std::string store;          // the file, as given
  std::string metric_choice;  // the --metric given, "" for each configuration's main metric
  ChangePointOptions detection;
  size_t hidden_series = 0;  // left out by --changes-only
};

std::string format_history_text(const std::vector<HistorySeries>& series, const HistoryOutput& about);
std::string format_history_markdown(const std::vector<HistorySeries>& series, const HistoryOutput& about);
nlohmann::json history_json(const std::vector<HistorySeries>& series, const HistoryOutput& about);
std::string format_history(const std::vector<HistorySeries>& series, const HistoryOutput& about, HistoryFormat format);

// Shared by the text forms: a point's change from the previous measured point's median, none for the
// first measured point and for unmeasured points.
std::vector<std::optional<double>> change_from_previous(const HistorySeries& series);
// The change whose index is `point`, if any.
const HistoryChange* change_at(const HistorySeries& series, size_t point);
// "2025-06-01 12:00:05" from the store's "2025-06-01T12:00:05.123Z".
std::string display_time(const std::string& store_time);
// The commit's first 12 characters, keeping a "-dirty" suffix.
std::string short_commit(const std::string& commit);
// A metric value with the precision its size calls for (20.13, 512.4, 8123).
std::string display_value(double value);

}  // namespace infertune
