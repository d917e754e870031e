#pragma once
// The summary statistics stored per trial and metric (DESIGN.md, "Results store": metrics table).
// Raw samples are always kept, so any of these can be recomputed.
#include <optional>
#include <span>

#include "kernels/result.h"

namespace infertune {

struct SampleSummary {
  size_t n = 0;
  double mean = 0;
  std::optional<double> stddev;  // sample standard deviation (n - 1); none for n = 1
  double median = 0;
  double p50 = 0;  // equal to median; both are kept because reports ask for either name
  double p95 = 0;
  double p99 = 0;
  std::optional<double> ci95_half_width;  // t_{0.975, n-1} * stddev / sqrt(n); none for n = 1
};

double mean(std::span<const double> values);
// Sample standard deviation (divides by n - 1); 0 for fewer than two values.
double sample_stddev(std::span<const double> values);
// Linear interpolation between the closest ranks (Hyndman and Fan's type 7, numpy's and R's default):
// the value at rank (n - 1) * q of the sorted values. `sorted` must be sorted ascending and non-empty.
double percentile_of_sorted(std::span<const double> sorted, double q);
// Half-width of the 95% confidence interval of the mean (Student t, n - 1 degrees of freedom).
std::optional<double> ci95_half_width(size_t n, double stddev);

// Errors when `values` is empty or holds a NaN or an infinity.
Result<SampleSummary> summarize(std::span<const double> values);

}  // namespace infertune
