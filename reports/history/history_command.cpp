// `infertune history --db results.db [--metric tg|pp|ttft|itl|e2e|aggregate] [--config SUBSTRING]
// [--host FINGERPRINT] [--min-change 3%] [-o table|md|json] [--changes-only]`: each configuration across the
// builds it was measured with, in time order, with the builds where its level changed (history_series.h).
// Only reads the store; exits 0 whatever the history shows (compare is the regression gate).
#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <memory>
#include <string>

#include "reports/history/history_metrics.h"
#include "reports/history/history_output.h"
#include "reports/history/history_series.h"
#include "reports/reports_commands.h"

namespace infertune {
namespace {

constexpr const char* kCommand = "history";

struct HistoryFlags {
  std::string db;
  std::string metric;
  std::string config;
  std::string host;
  std::string min_change = "3%";
  std::string output = "table";
  bool changes_only = false;
};

// "3%" or a fraction "0.03".
Result<double> parse_min_change(const std::string& text) {
  const bool is_percent = text.ends_with('%');
  const std::string number = is_percent ? text.substr(0, text.size() - 1) : text;
  double value = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  const double fraction = is_percent ? value / 100 : value;
  if (number.empty() || error != std::errc() || end != number.data() + number.size() || !(fraction >= 0) ||
      fraction >= 1) {
    return fail("--min-change {}: expected a percentage such as 3% or a fraction below 1 such as 0.03", text);
  }
  return fraction;
}

Result<HistoryQuery> query_from(const HistoryFlags& flags) {
  HistoryQuery query;
  if (!flags.metric.empty()) {
    auto metric = history_metric_named(flags.metric);
    if (!metric) return metric.error();
    query.metric = *metric;
  }
  auto min_change = parse_min_change(flags.min_change);
  if (!min_change) return min_change.error();
  query.detection.min_relative_change = *min_change;
  query.config_substring = flags.config;
  query.host_prefix = flags.host;
  return query;
}

Result<int64_t> count_trials(ResultsStore& store) {
  auto count = store.database().prepare("SELECT count(*) FROM trials");
  if (!count) return count.error();
  auto row = count->step();
  if (!row) return row.error();
  return *row ? count->column_int(0) : 0;
}

// Why a store with trials gave no series: the filters, or no samples of the metric.
std::string nothing_matched(const HistoryFlags& flags, const HistoryQuery& query) {
  std::string filters;
  if (!flags.config.empty()) filters += fmt::format(" --config '{}'", flags.config);
  if (!flags.host.empty()) filters += fmt::format(" --host {}", flags.host);
  const std::string metric = query.metric.empty() ? "its workload's main metric" : "metric " + query.metric;
  if (filters.empty()) return fmt::format("{}: no trial has samples of {}", flags.db, metric);
  return fmt::format("{}: no configuration matching{} has samples of {}", flags.db, filters, metric);
}

int run_history(const HistoryFlags& flags) {
  const auto format = parse_history_format(flags.output);
  if (!format) return report_error(kCommand, fmt::format("-o {}: expected table, md or json", flags.output));
  auto query = query_from(flags);
  if (!query) return report_error(kCommand, query.error().message);
  // Read-only: a mistyped path leaves no database behind, and another SQLite file is refused untouched.
  auto store = ResultsStore::open_read_only(flags.db);
  if (!store) return report_error(kCommand, store.error().message);
  auto trials = count_trials(*store);
  if (!trials) return report_error(kCommand, fmt::format("{}: {}", flags.db, trials.error().message));
  if (*trials == 0) return report_error(kCommand, fmt::format("results store {}: has no trials", flags.db));
  auto series = load_history(*store, *query);
  if (!series) return report_error(kCommand, series.error().message);
  if (series->empty()) return report_error(kCommand, nothing_matched(flags, *query));

  HistoryOutput about{flags.db, query->metric, query->detection};
  if (flags.changes_only) {
    const size_t before = series->size();
    std::erase_if(*series, [](const HistorySeries& s) { return s.changes.empty(); });
    about.hidden_series = before - series->size();
  }
  const std::string text = format_history(*series, about, *format);
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) {
    return report_error(kCommand, "cannot write to stdout");
  }
  return 0;
}

}  // namespace

void add_history_command(Subcommands& commands) {
  auto flags = std::make_shared<HistoryFlags>();
  CLI::App* sub = commands.add("history",
                               "Each configuration across builds in time order, per host, with the builds where "
                               "its performance changed (regressions and improvements) marked",
                               [flags] { return run_history(*flags); });
  sub->add_option("--db", flags->db, "The results store (SQLite file)")->required();
  sub->add_option("--metric", flags->metric,
                  "tg, pp, ttft, itl, e2e, aggregate or a stored metric name (default: each workload's main "
                  "metric: pp -> pp, tg and pp+tg -> tg, batched -> aggregate)");
  sub->add_option("--config", flags->config, "Only configurations whose label or settings contain SUBSTRING");
  sub->add_option("--host", flags->host, "Only this host (a fingerprint or its first characters)");
  sub->add_option("--min-change", flags->min_change,
                  "The smallest change of level reported, as a percentage (3%) or a fraction (0.03)")
      ->capture_default_str();
  sub->add_option("-o,--output", flags->output, "table, md or json")->capture_default_str();
  sub->add_flag("--changes-only", flags->changes_only, "Only configurations with at least one change point");
}

}  // namespace infertune
