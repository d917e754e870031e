#include "reports/compare/comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace infertune {
namespace {

using Groups = std::vector<std::vector<double>>;

// Ratios need positive values: a throughput of 0 (nothing measured) or a non-finite value is dropped, and
// a group left empty with it.
Groups positive_groups(const Groups& groups, size_t& dropped) {
  Groups kept;
  for (const auto& group : groups) {
    std::vector<double> values;
    for (double v : group) {
      if (std::isfinite(v) && v > 0) {
        values.push_back(v);
      } else {
        ++dropped;
      }
    }
    if (!values.empty()) kept.push_back(std::move(values));
  }
  return kept;
}

SideFigures figures_of(const Groups& groups) {
  SideFigures f;
  f.groups = groups.size();
  for (const auto& g : groups) f.values += g.size();
  if (f.values > 0) f.median = pooled_median(groups);
  return f;
}

std::vector<double> group_medians(const Groups& groups) {
  std::vector<double> medians;
  for (const auto& g : groups) medians.push_back(median_of(g));
  return medians;
}

// A block's fastest repetition. Interference on a shared machine only ever adds time, so the fastest of a
// block's repetitions is the one least disturbed, and it is far steadier than the block's median when a
// neighbour takes the CPU for part of the block (Chen and Revels, "Robust benchmarking in noisy
// environments", 2016). A slowdown in the code slows every repetition, the fastest too.
double best_of(const std::vector<double>& block, bool higher_is_better) {
  return higher_is_better ? *std::max_element(block.begin(), block.end())
                          : *std::min_element(block.begin(), block.end());
}

std::vector<double> best_of_blocks(const Groups& blocks, bool higher_is_better) {
  std::vector<double> best;
  for (const auto& b : blocks) best.push_back(best_of(b, higher_is_better));
  return best;
}

void add_note(std::string& note, const std::string& text) { note += (note.empty() ? "" : "; ") + text; }

// Mann-Whitney's smallest two-sided p for n and m values without ties: 2 / C(n + m, n).
double smallest_rank_p(size_t n, size_t m) {
  double combinations = 1;
  for (size_t i = 1; i <= std::min(n, m); ++i) combinations = combinations * static_cast<double>(n + m - i + 1) / i;
  return std::min(1.0, 2 / combinations);
}

void compare_independent(const Groups& base, const Groups& cand, const CompareSettings& settings,
                         MetricComparison& row) {
  row.test = "Mann-Whitney U";
  row.ratio = cand.empty() || base.empty() ? std::optional<double>() : row.candidate.median / row.baseline.median;
  if (base.size() < 2 || cand.size() < 2) {
    add_note(row.note, fmt::format("{} vs {} repetitions: an interval needs at least 2 on each side", base.size(),
                                   cand.size()));
    return;
  }
  const uint64_t seed = seed_from_text(row.key + "\n" + std::string(row.metric.store_name), settings.seed);
  BootstrapRatio boot = bootstrap_ratio_of_medians(base, cand, settings.resamples, seed, settings.confidence);
  row.ratio = std::exp(boot.log_ratio);
  row.ratio_interval = Interval{std::exp(boot.log_interval.low), std::exp(boot.log_interval.high)};
  row.replicate_log_ratios = std::move(boot.replicate_log_ratios);
  const std::vector<double> base_medians = group_medians(base);
  const std::vector<double> cand_medians = group_medians(cand);
  row.p_value = mann_whitney_u(base_medians, cand_medians).p_value;
  if (smallest_rank_p(base.size(), cand.size()) >= 1 - settings.confidence) {
    add_note(row.note, fmt::format("{} vs {} repetitions are too few for the rank test to reach p < {:g}", base.size(),
                                   cand.size(), 1 - settings.confidence));
  }
}

// The estimate is the Hodges-Lehmann one and the interval inverts the signed-rank test (compare_statistics.h),
// not a t interval: block timings on a shared machine are far from normal, and the two agree with each other.
// Why pairs and not the two sides' blocks pooled: on a machine that drifts (thermal throttling, a
// neighbour's job starting), the block-to-block spread within a side includes the drift, so intervals from
// the pooled blocks are wide, and a drift that is not symmetric in time would also bias them. Adjacent blocks
// share the machine's state, so their ratio cancels the drift; ABBA order makes each side run first in half of
// the pairs, which cancels an order effect (caches warmed by the previous run) as well.
void compare_paired(const Groups& base, const Groups& cand, const CompareSettings& settings, MetricComparison& row) {
  row.test = "Wilcoxon signed-rank";
  const size_t pairs = std::min(base.size(), cand.size());
  if (base.size() != cand.size()) {
    add_note(row.note, fmt::format("{} baseline and {} candidate blocks: {} pairs compared", base.size(), cand.size(),
                                   pairs));
  }
  const bool higher = row.metric.higher_is_better;
  for (size_t i = 0; i < pairs; ++i) {
    row.pair_log_ratios.push_back(std::log(best_of(cand[i], higher) / best_of(base[i], higher)));
  }
  if (pairs == 0) return;
  // Shown as each side's typical block: the median over its blocks of their fastest repetitions.
  row.baseline.median = median_of(best_of_blocks(base, higher));
  row.candidate.median = median_of(best_of_blocks(cand, higher));
  row.ratio = std::exp(median_of(row.pair_log_ratios));
  row.p_value = wilcoxon_signed_rank(row.pair_log_ratios).p_value;
  auto interval = signed_rank_interval(row.pair_log_ratios, settings.confidence);
  if (!interval) {
    add_note(row.note, fmt::format("{} block pair{} cannot give a {:g}% interval (at least 6 are needed: --blocks 12)",
                                   pairs, pairs == 1 ? "" : "s", settings.confidence * 100));
    return;
  }
  row.ratio = std::exp(interval->estimate);
  row.ratio_interval = Interval{std::exp(interval->interval.low), std::exp(interval->interval.high)};
}

MetricComparison compare_metric(const MeasuredConfiguration& b, const MeasuredConfiguration& c,
                                const CompareMetric& metric, const CompareSettings& settings) {
  MetricComparison row;
  row.key = b.key;
  row.label = b.label;
  row.metric = metric;
  row.threshold = threshold_for(settings, metric);
  size_t dropped = 0;
  const Groups base = positive_groups(b.groups.at(std::string(metric.store_name)), dropped);
  const Groups cand = positive_groups(c.groups.at(std::string(metric.store_name)), dropped);
  if (dropped > 0) add_note(row.note, fmt::format("{} values that are 0 or not finite left out", dropped));
  row.baseline = figures_of(base);
  row.candidate = figures_of(cand);
  if (settings.design == CompareDesign::independent) {
    compare_independent(base, cand, settings, row);
  } else {
    compare_paired(base, cand, settings, row);
  }
  row.verdict = decide_verdict({.ratio_interval = row.ratio_interval,
                                .higher_is_better = metric.higher_is_better,
                                .threshold = row.threshold,
                                .p_value = row.p_value,
                                .alpha = 1 - settings.confidence,
                                .warn_margin = settings.warn_margin});
  return row;
}

// A configuration that ran in the baseline and failed in the candidate is a regression: a FAIL row per
// metric the baseline has.
void add_candidate_failure(const MeasuredConfiguration& b, const MeasuredConfiguration& c,
                           const CompareSettings& settings, std::vector<MetricComparison>& rows) {
  std::vector<CompareMetric> metrics;
  for (const CompareMetric& m : settings.metrics) {
    if (b.groups.contains(std::string(m.store_name))) metrics.push_back(m);
  }
  if (metrics.empty() && !settings.metrics.empty()) metrics.push_back(settings.metrics.front());
  for (const CompareMetric& m : metrics) {
    MetricComparison row;
    row.key = b.key;
    row.label = b.label;
    row.metric = m;
    row.threshold = threshold_for(settings, m);
    if (auto it = b.groups.find(std::string(m.store_name)); it != b.groups.end()) {
      size_t dropped = 0;
      row.baseline = figures_of(positive_groups(it->second, dropped));
    }
    row.verdict = Verdict::fail;
    row.note = "the candidate failed where the baseline ran: " + c.failure;
    rows.push_back(std::move(row));
  }
}

void compare_configuration(const MeasuredConfiguration& b, const MeasuredConfiguration& c,
                           const CompareSettings& settings, ComparisonReport& report) {
  if (!b.ok && !c.ok) {
    report.unmatched.push_back({b.label, b.key, fmt::format("failed on both sides (baseline: {}; candidate: {})",
                                                            b.failure, c.failure)});
    return;
  }
  if (!b.ok) {
    report.unmatched.push_back({b.label, b.key, "failed in the baseline, nothing to compare with: " + b.failure});
    return;
  }
  if (!c.ok) {
    add_candidate_failure(b, c, settings, report.comparisons);
    return;
  }
  for (const CompareMetric& m : settings.metrics) {
    const std::string name(m.store_name);
    const bool in_base = b.groups.contains(name);
    const bool in_cand = c.groups.contains(name);
    if (in_base && in_cand) {
      report.comparisons.push_back(compare_metric(b, c, m, settings));
    } else if (in_base != in_cand) {
      report.unmatched.push_back(
          {fmt::format("{} [{}]", b.label, m.name), b.key,
           fmt::format("metric {} measured only in the {}", m.store_name, in_base ? "baseline" : "candidate")});
    }
  }
}

GeometricMean geometric_mean_of(const std::vector<const MetricComparison*>& rows, const CompareSettings& settings) {
  GeometricMean g;
  g.metric = rows.front()->metric;
  g.configurations = rows.size();
  g.threshold = threshold_for(settings, g.metric);
  std::vector<double> logs;
  for (const MetricComparison* r : rows) logs.push_back(std::log(*r->ratio));
  g.ratio = geometric_mean_of_logs(logs);
  if (settings.design == CompareDesign::independent) {
    // The replicates of every row were drawn independently, so the b-th of each together are one draw of
    // the whole set: their mean log ratio is one replicate of the geometric mean.
    size_t n = SIZE_MAX;
    for (const MetricComparison* r : rows) n = std::min(n, r->replicate_log_ratios.size());
    if (n > 0 && n != SIZE_MAX) {
      std::vector<double> replicates(n, 0.0);
      for (const MetricComparison* r : rows) {
        for (size_t i = 0; i < n; ++i) replicates[i] += r->replicate_log_ratios[i] / static_cast<double>(rows.size());
      }
      const Interval li = percentile_interval(replicates, settings.confidence);
      g.ratio_interval = Interval{std::exp(li.low), std::exp(li.high)};
    }
  } else {
    // Every block ran every test, so pair i of each row is the same moment: average over rows per pair.
    size_t n = SIZE_MAX;
    for (const MetricComparison* r : rows) n = std::min(n, r->pair_log_ratios.size());
    if (n != SIZE_MAX) {
      std::vector<double> per_pair(n, 0.0);
      for (const MetricComparison* r : rows) {
        for (size_t i = 0; i < n; ++i) per_pair[i] += r->pair_log_ratios[i] / static_cast<double>(rows.size());
      }
      if (auto interval = signed_rank_interval(per_pair, settings.confidence)) {
        g.ratio = std::exp(interval->estimate);
        g.ratio_interval = Interval{std::exp(interval->interval.low), std::exp(interval->interval.high)};
      }
    }
  }
  g.verdict = decide_verdict({.ratio_interval = g.ratio_interval,
                              .higher_is_better = g.metric.higher_is_better,
                              .threshold = g.threshold,
                              .p_value = std::nullopt,
                              .alpha = 1 - settings.confidence,
                              .warn_margin = settings.warn_margin});
  return g;
}

void add_geometric_means(ComparisonReport& report) {
  for (const CompareMetric& m : report.settings.metrics) {
    std::vector<const MetricComparison*> rows;
    for (const MetricComparison& r : report.comparisons) {
      if (r.metric.name == m.name && r.ratio && std::isfinite(*r.ratio) && *r.ratio > 0) rows.push_back(&r);
    }
    if (!rows.empty()) report.geometric_means.push_back(geometric_mean_of(rows, report.settings));
  }
}

void decide_overall(ComparisonReport& report) {
  report.verdict = Verdict::pass;
  for (const MetricComparison& r : report.comparisons) report.verdict = most_severe(report.verdict, r.verdict);
  // A geometric mean over one configuration is that configuration again (without its rank test): it counts
  // only over two or more.
  for (const GeometricMean& g : report.geometric_means) {
    if (g.configurations >= 2) report.verdict = most_severe(report.verdict, g.verdict);
  }
}

}  // namespace

double threshold_for(const CompareSettings& settings, const CompareMetric& metric) {
  auto it = settings.thresholds.find(std::string(metric.store_name));
  return it != settings.thresholds.end() ? it->second : settings.default_threshold;
}

ComparisonReport compare_sides(const MeasuredSide& baseline, const MeasuredSide& candidate,
                               const CompareSettings& settings) {
  ComparisonReport report;
  report.baseline_side = baseline;
  report.candidate_side = candidate;
  report.settings = settings;
  report.notes = baseline.notes;
  report.notes.insert(report.notes.end(), candidate.notes.begin(), candidate.notes.end());
  std::map<std::string, const MeasuredConfiguration*> candidate_by_key;
  for (const MeasuredConfiguration& c : candidate.configurations) candidate_by_key.emplace(c.key, &c);
  std::set<std::string> matched;
  for (const MeasuredConfiguration& b : baseline.configurations) {
    auto it = candidate_by_key.find(b.key);
    if (it == candidate_by_key.end()) {
      report.unmatched.push_back({b.label, b.key, "only in the baseline"});
      continue;
    }
    matched.insert(b.key);
    compare_configuration(b, *it->second, settings, report);
  }
  for (const MeasuredConfiguration& c : candidate.configurations) {
    if (!matched.contains(c.key)) report.unmatched.push_back({c.label, c.key, "only in the candidate"});
  }
  if (settings.metrics_given) {
    for (const CompareMetric& m : settings.metrics) {
      const bool compared = std::any_of(report.comparisons.begin(), report.comparisons.end(),
                                        [&](const MetricComparison& r) { return r.metric.name == m.name; });
      if (!compared) report.notes.push_back(fmt::format("no configuration has {} ({}) on both sides", m.name, m.store_name));
    }
  }
  add_geometric_means(report);
  decide_overall(report);
  return report;
}

}  // namespace infertune
