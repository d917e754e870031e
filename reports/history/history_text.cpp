// The text forms of `infertune history`: an aligned table per series for a terminal, Markdown for a pull
// request or a CI summary; and the helpers both share with the JSON form.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/history/history_metrics.h"
#include "reports/history/history_output.h"

namespace infertune {
namespace {

using Row = std::vector<std::string>;

// Characters on screen: UTF-8 continuation bytes take no column ("±" is two bytes).
size_t display_width(const std::string& text) {
  return std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

// Columns padded to their widest cell, two spaces apart.
std::string aligned(const std::vector<Row>& rows, const std::string& indent) {
  std::vector<size_t> widths;
  for (const Row& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], display_width(row[i]));
  }
  std::string out;
  for (const Row& row : rows) {
    std::string line = indent;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - display_width(row[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string percent(double fraction) { return fmt::format("{:+.1f}%", fraction * 100); }

std::string p_text(double p) { return p < 0.001 ? "p < 0.001" : fmt::format("p = {:.3f}", p); }

std::string metric_text(const HistorySeries& s) {
  const std::string_view unit = metric_unit(s.metric);
  return fmt::format("{} ({}{}{} is better)", s.metric, unit, unit.empty() ? "" : ", ",
                     s.higher_is_better ? "higher" : "lower");
}

std::string series_heading(const HistorySeries& s) {
  const size_t measured = std::count_if(s.points.begin(), s.points.end(), [](auto& p) { return p.measured(); });
  return fmt::format("host {} ({}), {}, {} builds measured of {}, {} change point{}", s.host_fingerprint,
                     s.host_cpu_model, metric_text(s), measured, s.points.size(), s.changes.size(),
                     s.changes.size() == 1 ? "" : "s");
}

// "20.10 -> 17.00 tokens/s (-15.4%), regression, p = 0.001"
std::string change_text(const HistorySeries& s, const HistoryChange& c) {
  return fmt::format("{} -> {} {} ({}), {}, {}", display_value(c.before_level), display_value(c.after_level),
                     metric_unit(s.metric), percent(c.relative_change), to_string(c.direction), p_text(c.p_value));
}

std::string status_text(const HistoryPoint& p) {
  if (p.status != TrialStatus::ok) {
    std::string reason = p.reason.substr(0, p.reason.find('\n'));
    if (reason.size() > 60) reason = fmt::format("{}...", reason.substr(0, 57));
    return fmt::format("{}{}{}", to_string(p.status), reason.empty() ? "" : ": ", reason);
  }
  return "no samples of the metric";
}

Row point_row(const HistorySeries& s, size_t i, const std::optional<double>& vs_previous) {
  const HistoryPoint& p = s.points[i];
  Row row{display_time(p.time), short_commit(p.git_commit), p.version};
  if (!p.measured()) {  // the why in the last column, which is not padded: the others stay narrow
    row.insert(row.end(), {"-", "", "", "", status_text(p)});
    return row;
  }
  const SampleSummary& m = *p.summary;
  row.push_back(display_value(m.median));
  row.push_back(m.ci95_half_width ? fmt::format("±{}", display_value(*m.ci95_half_width)) : "");
  row.push_back(std::to_string(m.n));
  row.push_back(vs_previous ? percent(*vs_previous) : "");
  const HistoryChange* change = change_at(s, i);
  row.push_back(change ? fmt::format("<< {} {}", to_string(change->direction), percent(change->relative_change)) : "");
  return row;
}

struct ChangeCount {
  size_t changes = 0;
  size_t regressions = 0;
  size_t configurations = 0;
};

ChangeCount count_changes(const std::vector<HistorySeries>& series) {
  ChangeCount count;
  for (const HistorySeries& s : series) {
    count.changes += s.changes.size();
    count.configurations += s.changes.empty() ? 0 : 1;
    for (const HistoryChange& c : s.changes) count.regressions += c.direction == ChangeDirection::regression;
  }
  return count;
}

std::string summary_line(const std::vector<HistorySeries>& series, const HistoryOutput& about) {
  const ChangeCount count = count_changes(series);
  std::string line = fmt::format(
      "{} change point{} ({} regression{}, {} improvement{}) in {} of {} series; metric: {}; a change is at least "
      "{:g}% with permutation p <= {:g}",
      count.changes, count.changes == 1 ? "" : "s", count.regressions, count.regressions == 1 ? "" : "s",
      count.changes - count.regressions, count.changes - count.regressions == 1 ? "" : "s", count.configurations,
      series.size(), about.metric_choice.empty() ? "each workload's main metric" : about.metric_choice,
      about.detection.min_relative_change * 100, about.detection.alpha);
  if (about.hidden_series > 0) line += fmt::format("; {} series without a change not shown", about.hidden_series);
  return line;
}

}  // namespace

std::optional<HistoryFormat> parse_history_format(std::string_view name) {
  if (name == "table") return HistoryFormat::table;
  if (name == "md") return HistoryFormat::markdown;
  if (name == "json") return HistoryFormat::json;
  return std::nullopt;
}

std::vector<std::optional<double>> change_from_previous(const HistorySeries& series) {
  std::vector<std::optional<double>> changes(series.points.size());
  std::optional<double> previous;
  for (size_t i = 0; i < series.points.size(); ++i) {
    const HistoryPoint& p = series.points[i];
    if (!p.measured()) continue;
    if (previous && *previous > 0) changes[i] = p.summary->median / *previous - 1;
    previous = p.summary->median;
  }
  return changes;
}

const HistoryChange* change_at(const HistorySeries& series, size_t point) {
  for (const HistoryChange& c : series.changes) {
    if (c.index == point) return &c;
  }
  return nullptr;
}

std::string display_time(const std::string& store_time) {
  std::string time = store_time.substr(0, 19);
  if (time.size() > 10 && time[10] == 'T') time[10] = ' ';
  return time;
}

std::string short_commit(const std::string& commit) {
  constexpr std::string_view kDirty = "-dirty";
  const bool dirty = commit.ends_with(kDirty);
  const std::string base = dirty ? commit.substr(0, commit.size() - kDirty.size()) : commit;
  return fmt::format("{}{}", base.substr(0, 12), dirty ? kDirty : "");
}

std::string display_value(double value) {
  const double size = std::abs(value);
  if (size >= 1000) return fmt::format("{:.0f}", value);
  if (size >= 100) return fmt::format("{:.1f}", value);
  return fmt::format("{:.2f}", value);
}

std::string format_history_text(const std::vector<HistorySeries>& series, const HistoryOutput& about) {
  std::string out;
  for (const HistorySeries& s : series) {
    out += fmt::format("{}\n  {}\n", s.configuration.label, series_heading(s));
    std::vector<Row> rows{{"time (UTC)", "commit", "version", "median", "95% CI", "n", "vs prev", "change"}};
    const auto vs_previous = change_from_previous(s);
    for (size_t i = 0; i < s.points.size(); ++i) rows.push_back(point_row(s, i, vs_previous[i]));
    out += aligned(rows, "  ");
    for (const HistoryChange& c : s.changes) {
      const HistoryPoint& p = s.points[c.index];
      out +=
          fmt::format("  change at {} ({}): {}\n", short_commit(p.git_commit), display_time(p.time), change_text(s, c));
    }
    out += "\n";
  }
  out += summary_line(series, about) + "\n";
  for (const HistorySeries& s : series) {
    for (const HistoryChange& c : s.changes) {
      out += fmt::format("  {:<11}  {:>7}  {}  at {}  [{}]\n", to_string(c.direction), percent(c.relative_change),
                         s.configuration.label, short_commit(s.points[c.index].git_commit), s.host_fingerprint);
    }
  }
  return out;
}

std::string format_history_markdown(const std::vector<HistorySeries>& series, const HistoryOutput& about) {
  auto cell = [](const std::string& text) {  // a '|' would end the cell
    std::string escaped;
    for (char c : text) {
      if (c == '|') escaped.push_back('\\');
      escaped.push_back(c);
    }
    return escaped;
  };
  std::string out = "## Performance history\n\n";
  for (const HistorySeries& s : series) {
    out += fmt::format("### {}\n\n{}\n\n", cell(s.configuration.label), series_heading(s));
    out += "| time (UTC) | commit | version | median | 95% CI | n | vs prev | change |\n";
    out += "|---|---|---|---:|---:|---:|---:|---|\n";
    const auto vs_previous = change_from_previous(s);
    for (size_t i = 0; i < s.points.size(); ++i) {
      Row row = point_row(s, i, vs_previous[i]);
      if (change_at(s, i) != nullptr) row[7] = fmt::format("**{}**", row[7].substr(3));
      std::string line = "|";
      for (const std::string& c : row) line += fmt::format(" {} |", cell(c));
      out += line + "\n";
    }
    out += "\n";
    for (const HistoryChange& c : s.changes) {
      const HistoryPoint& p = s.points[c.index];
      out += fmt::format("- change at `{}` ({}): {}\n", short_commit(p.git_commit), display_time(p.time),
                         change_text(s, c));
    }
    if (!s.changes.empty()) out += "\n";
  }
  out += fmt::format("### Summary\n\n{}\n", summary_line(series, about));
  if (count_changes(series).changes == 0) return out;
  out += "\n| direction | change | configuration | commit | host |\n|---|---:|---|---|---|\n";
  for (const HistorySeries& s : series) {
    for (const HistoryChange& c : s.changes) {
      out += fmt::format("| {} | {} | {} | `{}` | {} |\n", to_string(c.direction), percent(c.relative_change),
                         cell(s.configuration.label), short_commit(s.points[c.index].git_commit), s.host_fingerprint);
    }
  }
  return out;
}

std::string format_history(const std::vector<HistorySeries>& series, const HistoryOutput& about, HistoryFormat format) {
  switch (format) {
    case HistoryFormat::table:
      return format_history_text(series, about);
    case HistoryFormat::markdown:
      return format_history_markdown(series, about);
    case HistoryFormat::json:
      return history_json(series, about).dump(2) + "\n";
  }
  return "";
}

}  // namespace infertune
