#pragma once
// A baseline and a candidate compared: configurations matched by key (never by position), each chosen
// metric both sides measured compared with an interval, a rank test and a verdict (verdict.h), the
// geometric mean per metric over the configurations, and the configurations that could not be compared,
// named with the reason. The renderers (compare_output.h) print this; nothing here prints.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/compare/compare_metrics.h"
#include "reports/compare/compare_statistics.h"
#include "reports/compare/measured_side.h"
#include "reports/compare/verdict.h"

namespace infertune {

// independent: two stores, repetitions resampled (bootstrap). paired_blocks: compare --bin, the i-th
// blocks of both sides ran next to each other (paired analysis).
enum class CompareDesign { independent, paired_blocks };

struct CompareSettings {
  CompareDesign design = CompareDesign::independent;
  std::vector<CompareMetric> metrics;          // what to compare, in this order
  bool metrics_given = false;                  // --metric: a chosen metric neither side has is noted
  std::map<std::string, double> thresholds;    // per metric store name, fraction
  double default_threshold = 0.05;             // for a metric without its own
  double warn_margin = 0.01;                   // verdict.h: WARN needs a worsening beyond this
  double confidence = 0.95;
  int resamples = 4000;
  uint64_t seed = 20240601;
};

struct SideFigures {
  size_t groups = 0;  // repetitions (stores) or blocks (--bin)
  size_t values = 0;
  double median = 0;  // of every value
};

struct MetricComparison {
  std::string key;
  std::string label;
  CompareMetric metric;
  SideFigures baseline, candidate;
  std::optional<double> ratio;            // candidate / baseline (the metric's own direction)
  std::optional<Interval> ratio_interval;
  std::optional<double> p_value;
  std::string test;                       // "Mann-Whitney U", "Wilcoxon signed-rank"
  double threshold = 0.05;
  Verdict verdict = Verdict::inconclusive;
  std::string note;                       // why INCONCLUSIVE without an interval, a failed trial, ...
  std::vector<double> replicate_log_ratios;  // bootstrap replicates (independent design)
  std::vector<double> pair_log_ratios;       // per block pair (paired design)
};

struct GeometricMean {
  CompareMetric metric;
  size_t configurations = 0;
  double ratio = 1;
  std::optional<Interval> ratio_interval;
  double threshold = 0.05;
  Verdict verdict = Verdict::inconclusive;
};

struct UnmatchedConfiguration {
  std::string label;
  std::string key;
  std::string reason;  // "only in the baseline", "failed on both sides: ...", ...
};

struct ComparisonReport {
  std::string mode;  // "stores" or "binaries"
  MeasuredSide baseline_side, candidate_side;  // groups kept for the JSON's counts; descriptions for headers
  CompareSettings settings;
  std::string threshold_source;  // "--threshold 5%", "A/A runs in aa.db (...)"
  std::vector<MetricComparison> comparisons;
  std::vector<GeometricMean> geometric_means;
  std::vector<UnmatchedConfiguration> unmatched;
  std::vector<std::string> notes;
  Verdict verdict = Verdict::pass;
  bool compared_anything() const { return !comparisons.empty(); }
};

ComparisonReport compare_sides(const MeasuredSide& baseline, const MeasuredSide& candidate,
                               const CompareSettings& settings);

double threshold_for(const CompareSettings& settings, const CompareMetric& metric);

}  // namespace infertune
