#include "reports/report/history_section.h"

#include <fmt/format.h>

#include <algorithm>

#include "reports/history/history_output.h"
#include "reports/history/history_series.h"
#include "reports/html/html_table.h"
#include "reports/html/html_text.h"
#include "reports/html/svg_chart.h"

namespace infertune {
namespace {

constexpr size_t kMostCharts = 30;  // changed series first; the table lists every change anyway

size_t measured_points(const HistorySeries& s) {
  return static_cast<size_t>(std::ranges::count_if(s.points, [](const HistoryPoint& p) { return p.measured(); }));
}

std::string point_label(const HistoryPoint& p) {
  return fmt::format("{} {}", short_commit(p.git_commit), display_time(p.time).substr(5, 11));
}

Chart series_chart(const HistorySeries& s) {
  Chart chart;
  chart.title = s.configuration.label;
  if (chart.title.size() > 64) chart.title = chart.title.substr(0, 63) + "…";
  chart.y = {s.metric + " (median; bar: range of the repetitions)", {}, true};
  chart.x.title = "build (commit, date) in time order";
  chart.width = 560;
  ChartSeries measured{s.host_cpu_model + " " + s.host_fingerprint.substr(0, 8), {}, true};
  for (size_t i = 0; i < s.points.size(); ++i) {
    const HistoryPoint& p = s.points[i];
    chart.x.categories.push_back(point_label(p));
    if (!p.measured()) continue;
    ChartPoint point;
    point.x = static_cast<double>(i);
    point.y = p.summary->median;
    const auto [low, high] = std::ranges::minmax(p.samples);
    point.y_low = low;
    point.y_high = high;
    point.emphasized = change_at(s, i) != nullptr;
    point.tooltip = fmt::format("{} (version {}), {}\nsweep {} trial {}: median {} over {} repetitions", p.git_commit,
                                p.version, display_time(p.time), p.sweep_id, p.trial_id,
                                display_value(p.summary->median), p.samples.size());
    measured.points.push_back(point);
  }
  chart.series.push_back(std::move(measured));
  for (const HistoryChange& c : s.changes) {
    chart.markers.push_back({static_cast<double>(c.index) - 0.5,
                             fmt::format("{} {:+.1f}% (p = {:.3g}) at {}", to_string(c.direction),
                                         c.relative_change * 100, c.p_value,
                                         short_commit(s.points[c.index].git_commit))});
  }
  return chart;
}

Table changes_table(const std::vector<HistorySeries>& all, const std::filesystem::path& store) {
  Table t;
  t.columns = {"store", "configuration", "host", "metric", "direction", "change_pct", "before", "after", "p_value",
               "first_build", "time"};
  for (const HistorySeries& s : all) {
    for (const HistoryChange& c : s.changes) {
      const HistoryPoint& p = s.points[c.index];
      t.rows.push_back({store.filename().string(), s.configuration.label, s.host_fingerprint, s.metric,
                        std::string(to_string(c.direction)), c.relative_change * 100, c.before_level, c.after_level,
                        c.p_value, p.git_commit, display_time(p.time)});
    }
  }
  return t;
}

}  // namespace

std::string history_section_html(const std::vector<std::filesystem::path>& stores) {
  std::string charts, tables;
  size_t n_series = 0, n_charts = 0, n_tables = 0;
  for (const std::filesystem::path& path : stores) {
    auto store = ResultsStore::open_read_only(path);
    if (!store) continue;  // the report's own loading already named any unreadable store
    auto series = load_history(*store, HistoryQuery{});
    if (!series) continue;  // no trials: nothing to follow
    std::erase_if(*series, [](const HistorySeries& s) { return measured_points(s) < 2; });
    std::ranges::stable_sort(*series, [](const HistorySeries& a, const HistorySeries& b) {
      return a.changes.size() > b.changes.size();
    });
    n_series += series->size();
    for (const HistorySeries& s : *series) {
      if (n_charts++ >= kMostCharts) break;
      charts += "<figure>" + render_svg_chart(series_chart(s)) + "</figure>";
    }
    const Table changes = changes_table(*series, path);
    if (!changes.rows.empty()) {
      tables += html_table(changes, {fmt::format("history-changes-{}", ++n_tables), true, false, false});
    }
  }
  if (n_series == 0) return "";
  std::string out = fmt::format(R"(<p class="note">{} configurations were measured more than once{}.</p>)", n_series,
                                n_series > kMostCharts ? fmt::format("; the {} drawn are those with the most changes", kMostCharts) : "");
  out += tables.empty() ? R"(<p class="note"><span class="badge ok">no change points</span> no configuration moved beyond its noise and the 3% minimum.</p>)"
                        : "<h3>Change points</h3>" + tables;
  return out + R"(<div class="charts">)" + charts + "</div>";
}

}  // namespace infertune
