#include "sweeps/store/statistics.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sweeps/store/student_t.h"

namespace infertune {

double mean(std::span<const double> values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double sample_stddev(std::span<const double> values) {
  if (values.size() < 2) return 0;
  // Two passes: subtracting the mean first keeps precision when values are large and close together.
  const double m = mean(values);
  double squares = 0;
  for (double v : values) squares += (v - m) * (v - m);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

double percentile_of_sorted(std::span<const double> sorted, double q) {
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<size_t>(std::floor(rank));
  if (below + 1 >= sorted.size()) return sorted.back();
  const double fraction = rank - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[below + 1] - sorted[below]);
}

std::optional<double> ci95_half_width(size_t n, double stddev) {
  if (n < 2) return std::nullopt;
  const double df = static_cast<double>(n - 1);
  return student_t_quantile(0.975, df) * stddev / std::sqrt(static_cast<double>(n));
}

Result<SampleSummary> summarize(std::span<const double> values) {
  if (values.empty()) return fail("no samples to summarize");
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) return fail("sample {} is {}", i, values[i]);
  }
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  SampleSummary s;
  s.n = values.size();
  s.mean = mean(values);
  if (s.n >= 2) {
    s.stddev = sample_stddev(values);
    s.ci95_half_width = ci95_half_width(s.n, *s.stddev);
  }
  s.median = percentile_of_sorted(sorted, 0.5);
  s.p50 = s.median;
  s.p95 = percentile_of_sorted(sorted, 0.95);
  s.p99 = percentile_of_sorted(sorted, 0.99);
  return s;
}

}  // namespace infertune
