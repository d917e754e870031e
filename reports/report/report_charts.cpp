#include "reports/report/report_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "reports/report/report_tables.h"
#include "sweeps/store/metric_names.h"

namespace infertune {
namespace {

struct MetricAxis {
  const char* metric;
  const char* title;
  bool higher_is_better;
};

constexpr MetricAxis kChartedMetrics[] = {
    {metric::kGenTokensPerSecond, "generation tokens/s (tg)", true},
    {metric::kPromptTokensPerSecond, "prompt tokens/s (pp)", true},
    {metric::kAggregateTokensPerSecond, "aggregate tokens/s (all sequences)", true},
    {metric::kTimeToFirstTokenMs, "time to first token, ms", false},
};

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// The dimension's values among the trials, ordered numerically when they are numbers.
std::vector<std::string> category_order(const Dimension& d, const std::vector<const ReportTrial*>& trials) {
  std::vector<std::string> values;
  for (const ReportTrial* t : trials) {
    std::string v = d.value(*t);
    if (std::ranges::find(values, v) == values.end()) values.push_back(std::move(v));
  }
  if (d.numeric) {
    std::ranges::stable_sort(values, [](const std::string& a, const std::string& b) {
      return std::strtod(a.c_str(), nullptr) < std::strtod(b.c_str(), nullptr);
    });
  }
  return values;
}

ChartPoint trial_point(const ReportTrial& t, const SampleSummary& s, double x, const std::string& sweep_name) {
  ChartPoint p;
  p.x = x;
  p.y = s.mean;
  if (s.ci95_half_width) {
    p.y_low = s.mean - *s.ci95_half_width;
    p.y_high = s.mean + *s.ci95_half_width;
  }
  p.tooltip = fmt::format(
      "{}\n{}\ntrial {} ({}): {:.4g}{}", t.key.label, sweep_name, t.id, t.workload, s.mean,
      s.ci95_half_width ? fmt::format(" ± {:.3g} (95%, n={})", *s.ci95_half_width, s.n) : fmt::format(" (n={})", s.n));
  return p;
}

std::optional<FigureChart> dimension_chart(const std::vector<ReportSweep>& sweeps, const MetricAxis& m,
                                           const Dimension& d) {
  std::vector<const ReportTrial*> trials;
  for (const ReportSweep& s : sweeps)
    for (const ReportTrial& t : s.trials)
      if (t.ok() && t.metric(m.metric)) trials.push_back(&t);
  const std::vector<std::string> categories = category_order(d, trials);
  if (categories.size() < 2) return std::nullopt;  // not swept
  FigureChart figure;
  Chart& chart = figure.chart;
  chart.title = fmt::format("{} by {}", m.title, d.name);
  chart.x = {d.name, categories, true};
  chart.y = {m.title, {}, true};  // tokens/s and ms are never negative
  chart.jitter = true;
  chart.lower_is_better = !m.higher_is_better;
  std::map<std::string, size_t> series_of;  // "sweep | workload" -> index
  for (const ReportSweep& s : sweeps) {
    for (const ReportTrial& t : s.trials) {
      const SampleSummary* summary = t.ok() ? t.metric(m.metric) : nullptr;
      if (!summary) continue;
      const std::string name = sweeps.size() > 1 ? fmt::format("{} | {}", s.name, t.workload) : t.workload;
      auto [it, added] = series_of.emplace(name, chart.series.size());
      if (added) chart.series.push_back({name, {}, true});
      const double x = static_cast<double>(std::ranges::find(categories, d.value(t)) - categories.begin());
      chart.series[it->second].points.push_back(trial_point(t, *summary, x, s.name));
    }
  }
  figure.caption = fmt::format(
      "Each dot is one trial's mean over its repetitions, the bar its 95% confidence interval; trials at the same "
      "{} differ in other settings (hover for the configuration). The line joins the {} value at each setting.",
      d.name, m.higher_is_better ? "best (highest)" : "best (lowest)");
  return figure;
}

}  // namespace

std::vector<FigureChart> dimension_charts(const std::vector<ReportSweep>& sweeps) {
  std::vector<FigureChart> charts;
  for (const MetricAxis& m : kChartedMetrics) {
    for (const Dimension& d : report_dimensions()) {
      if (auto chart = dimension_chart(sweeps, m, d)) charts.push_back(std::move(*chart));
    }
  }
  return charts;
}

std::vector<FigureChart> pareto_charts(const std::vector<ReportSweep>& sweeps) {
  FigureChart latency, memory;
  latency.chart.title = "Throughput against latency";
  memory.chart.title = "Throughput against peak memory";
  std::string bases;  // what the two scores measure, said in the caption (too long for an axis title)
  for (const ReportSweep& s : sweeps) {
    if (!s.recommendation) continue;
    const RecommendationReport& r = *s.recommendation;
    if (bases.empty() && r.throughput_basis && r.latency_basis) {
      bases = fmt::format(" Throughput: {}. Reply time: {}.", r.throughput_basis->description,
                          r.latency_basis->description);
    }
    const std::set<size_t> front(r.pareto_front.begin(), r.pareto_front.end());
    ChartSeries on_front{sweeps.size() > 1 ? s.name + " | Pareto front" : "Pareto front", {}, true};
    ChartSeries others{sweeps.size() > 1 ? s.name + " | other configurations" : "other configurations", {}, false};
    ChartSeries on_front_mem = on_front, others_mem = others;
    for (size_t i = 0; i < r.candidates.size(); ++i) {
      const Candidate& c = r.candidates[i];
      if (!c.throughput_tps || !c.excluded_reason.empty()) continue;
      const bool is_front = front.contains(i);
      ChartPoint p;
      p.y = c.throughput_tps->value;
      if (c.throughput_tps->ci95_half_width) {
        p.y_low = p.y - *c.throughput_tps->ci95_half_width;
        p.y_high = p.y + *c.throughput_tps->ci95_half_width;
      }
      p.emphasized = is_front;
      p.tooltip = fmt::format("{}\n{:.4g} tokens/s{}{}", candidate_label(c), p.y,
                              c.latency_ms ? fmt::format(", {:.4g} ms", c.latency_ms->value) : "",
                              c.peak_rss_bytes ? fmt::format(", peak {:.0f} MiB", mib(*c.peak_rss_bytes)) : "");
      if (c.latency_ms) {
        p.x = c.latency_ms->value;
        (is_front ? on_front : others).points.push_back(p);
      }
      if (c.peak_rss_bytes) {
        p.x = mib(*c.peak_rss_bytes);
        (is_front ? on_front_mem : others_mem).points.push_back(p);
      }
    }
    for (auto* s2 : {&on_front, &others})
      if (!s2->points.empty()) latency.chart.series.push_back(std::move(*s2));
    for (auto* s2 : {&on_front_mem, &others_mem})
      if (!s2->points.empty()) memory.chart.series.push_back(std::move(*s2));
  }
  latency.chart.x = {"reply time, ms", {}, false};
  latency.chart.y = {"throughput, tokens/s", {}, true};
  memory.chart.x = {"peak memory (RSS, predicted or measured, the larger), MiB", {}, false};
  memory.chart.y = {"throughput, tokens/s", {}, true};
  latency.caption =
      "Up and to the left is better. Emphasized points are the Pareto front over throughput, latency and memory "
      "(and, between quantization variants with measured quality, KL divergence from the base): no other "
      "configuration is at least as good in all of them and better in one." +
      bases;
  memory.caption = "Up and to the left is better: the same configurations by the memory they need.";
  std::vector<FigureChart> charts;
  for (FigureChart* f : {&latency, &memory})
    if (!f->chart.series.empty()) charts.push_back(std::move(*f));
  return charts;
}

std::vector<FigureChart> memory_charts(const std::vector<ReportSweep>& sweeps) {
  FigureChart figure;
  figure.chart.title = "Predicted against measured peak memory";
  figure.chart.x = {"predicted by the memory model, MiB", {}, true};
  figure.chart.y = {"measured peak RSS, MiB", {}, true};
  figure.chart.diagonal = true;
  for (const ReportSweep& s : sweeps) {
    ChartSeries series{s.name, {}, false};
    for (const ReportTrial& t : s.trials) {
      if (!t.predicted_rss_bytes || !t.peak_rss_bytes) continue;
      ChartPoint p;
      p.x = mib(*t.predicted_rss_bytes);
      p.y = mib(*t.peak_rss_bytes);
      p.tooltip = fmt::format("{}\ntrial {}: predicted {:.1f} MiB, measured {:.1f} MiB ({:+.1f}%)", t.key.label, t.id,
                              p.x, p.y, p.x > 0 ? (p.y / p.x - 1) * 100 : 0.0);
      series.points.push_back(p);
    }
    if (!series.points.empty()) figure.chart.series.push_back(std::move(series));
  }
  figure.caption =
      "Points on the dashed line were predicted exactly; above it the model under-estimated. The sweep uses the "
      "prediction to skip configurations that cannot fit (--max-mem).";
  if (figure.chart.series.empty()) return {};
  return {std::move(figure)};
}

std::vector<FigureChart> quality_charts(const std::vector<ReportSweep>& sweeps) {
  FigureChart figure;
  figure.chart.title = "Throughput against quality loss";
  std::string basis;
  for (const ReportSweep& s : sweeps) {
    if (!s.recommendation) continue;
    const RecommendationReport& r = *s.recommendation;
    if (basis.empty() && r.throughput_basis) basis = " Throughput: " + r.throughput_basis->description + ".";
    ChartSeries series{sweeps.size() > 1 ? s.name : "quantization variants", {}, true};
    for (const Candidate& c : r.candidates) {
      if (!c.throughput_tps || !c.quality) continue;
      const VariantQualityRecord& q = *c.quality;
      const std::optional<double> increase = q.ppl_increase_pct();
      if (!increase) continue;
      ChartPoint p;
      p.x = *increase;
      p.y = c.throughput_tps->value;
      if (c.throughput_tps->ci95_half_width) {
        p.y_low = p.y - *c.throughput_tps->ci95_half_width;
        p.y_high = p.y + *c.throughput_tps->ci95_half_width;
      }
      p.emphasized = c.excluded_reason.empty();
      p.tooltip = fmt::format("{}\n{:.4g} tokens/s; perplexity {:.4f} vs base {:.4f} ({:+.2f}%)", candidate_label(c),
                              p.y, q.ppl.value_or(0), q.base_ppl.value_or(0), *increase);
      if (q.kld_mean) p.tooltip += fmt::format("; mean KLD {:.5f}", *q.kld_mean);
      if (q.same_top) p.tooltip += fmt::format("; same top token {:.1f}%", *q.same_top * 100);
      series.points.push_back(p);
    }
    if (!series.points.empty()) figure.chart.series.push_back(std::move(series));
  }
  if (figure.chart.series.empty()) return {};
  figure.chart.x = {"perplexity increase over the base model, %", {}, false};
  figure.chart.y = {"throughput, tokens/s", {}, true};
  figure.caption =
      "Up and to the left is better: faster and closer to the base model. Quality is measured once per variant on the "
      "built-in python-tutorial corpus against the sweep's base (hover for the KL divergence and the share of "
      "positions with the same most likely token)." +
      basis;
  return {std::move(figure)};
}

std::vector<std::string> quality_notes(const std::vector<ReportSweep>& sweeps) {
  std::vector<std::string> notes;
  for (const ReportSweep& s : sweeps) {
    if (!s.recommendation) continue;
    for (const std::string& note : s.recommendation->quality_notes) {
      std::string line = sweeps.size() > 1 ? s.name + ": " + note : note;
      if (std::ranges::find(notes, line) == notes.end()) notes.push_back(std::move(line));
    }
  }
  return notes;
}

}  // namespace infertune
