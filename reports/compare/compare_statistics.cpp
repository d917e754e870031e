#include "reports/compare/compare_statistics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "sweeps/store/statistics.h"
#include "sweeps/store/student_t.h"

namespace infertune {
namespace {

constexpr size_t kExactMannWhitneyMax = 20;
constexpr size_t kExactSignedRankMax = 25;

// An index in [0, n): modulo of a 64-bit draw (the bias, n / 2^64, is far below anything measured here).
size_t draw_index(std::mt19937_64& rng, size_t n) { return static_cast<size_t>(rng() % n); }

double two_sided_normal_p(double z) { return std::erfc(std::fabs(z) / std::sqrt(2.0)); }

// Ranks 1..n of the values, ties given their average rank; `tie_term` gets sum(t^3 - t) over tie groups.
std::vector<double> average_ranks(std::span<const double> values, double& tie_term) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  tie_term = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j + 1)) / 2;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    const double t = static_cast<double>(j - i + 1);
    tie_term += t * t * t - t;
    i = j + 1;
  }
  return ranks;
}

// Two-sided p from a discrete null distribution given as counts per statistic value 0..max.
double two_sided_exact_p(const std::vector<double>& counts, size_t observed) {
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  double lower = 0;
  double upper = 0;
  for (size_t v = 0; v < counts.size(); ++v) {
    if (v <= observed) lower += counts[v];
    if (v >= observed) upper += counts[v];
  }
  return std::min(1.0, 2 * std::min(lower, upper) / total);
}

// Counts of the arrangements of m + n distinct values giving each U (the pairs where the second sample
// is larger): f(m, n, u) = f(m - 1, n, u - n) + f(m, n - 1, u).
std::vector<double> mann_whitney_null_counts(size_t m, size_t n) {
  // table[j][u]: counts for (i, j) while i grows.
  std::vector<std::vector<double>> previous(n + 1), current(n + 1);
  for (size_t j = 0; j <= n; ++j) previous[j] = {1.0};  // i = 0: one arrangement, U = 0
  for (size_t i = 1; i <= m; ++i) {
    current[0] = {1.0};
    for (size_t j = 1; j <= n; ++j) {
      std::vector<double> counts(i * j + 1, 0.0);
      for (size_t u = 0; u < previous[j].size(); ++u) counts[u + j] += previous[j][u];  // the i-th is largest
      for (size_t u = 0; u < current[j - 1].size(); ++u) counts[u] += current[j - 1][u];
      current[j] = std::move(counts);
    }
    std::swap(previous, current);
  }
  return previous[n];
}

// Counts of the subsets of {1..n} by their sum.
std::vector<double> signed_rank_null_counts(size_t n) {
  std::vector<double> counts(n * (n + 1) / 2 + 1, 0.0);
  counts[0] = 1;
  for (size_t k = 1; k <= n; ++k) {
    for (size_t s = counts.size() - 1; s >= k; --s) counts[s] += counts[s - k];
  }
  return counts;
}

}  // namespace

double median_of(std::span<const double> values) {
  std::vector<double> copy(values.begin(), values.end());
  const size_t mid = copy.size() / 2;
  std::nth_element(copy.begin(), copy.begin() + static_cast<std::ptrdiff_t>(mid), copy.end());
  if (copy.size() % 2 == 1) return copy[mid];
  const double upper = copy[mid];
  const double lower = *std::max_element(copy.begin(), copy.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

double pooled_median(const std::vector<std::vector<double>>& groups) {
  std::vector<double> all;
  for (const auto& g : groups) all.insert(all.end(), g.begin(), g.end());
  return median_of(all);
}

Interval percentile_interval(std::span<const double> replicates, double confidence) {
  std::vector<double> sorted(replicates.begin(), replicates.end());
  std::sort(sorted.begin(), sorted.end());
  const double tail = (1 - confidence) / 2;
  return {percentile_of_sorted(sorted, tail), percentile_of_sorted(sorted, 1 - tail)};
}

BootstrapRatio bootstrap_ratio_of_medians(const std::vector<std::vector<double>>& baseline,
                                          const std::vector<std::vector<double>>& candidate, int resamples,
                                          uint64_t seed, double confidence) {
  BootstrapRatio result;
  result.log_ratio = std::log(pooled_median(candidate) / pooled_median(baseline));
  std::mt19937_64 rng(seed);
  std::vector<double> drawn;
  auto resampled_median = [&](const std::vector<std::vector<double>>& groups) {
    drawn.clear();
    for (size_t i = 0; i < groups.size(); ++i) {
      const auto& group = groups[draw_index(rng, groups.size())];
      drawn.insert(drawn.end(), group.begin(), group.end());
    }
    return median_of(drawn);
  };
  result.replicate_log_ratios.reserve(static_cast<size_t>(std::max(resamples, 0)));
  for (int b = 0; b < resamples; ++b) {
    const double base = resampled_median(baseline);
    const double cand = resampled_median(candidate);
    result.replicate_log_ratios.push_back(std::log(cand / base));
  }
  result.log_interval = resamples > 0 ? percentile_interval(result.replicate_log_ratios, confidence)
                                      : Interval{result.log_ratio, result.log_ratio};
  return result;
}

RankTest mann_whitney_u(std::span<const double> baseline, std::span<const double> candidate) {
  const size_t m = candidate.size();
  const size_t n = baseline.size();
  std::vector<double> all(candidate.begin(), candidate.end());
  all.insert(all.end(), baseline.begin(), baseline.end());
  double tie_term = 0;
  const std::vector<double> ranks = average_ranks(all, tie_term);
  const double rank_sum = std::accumulate(ranks.begin(), ranks.begin() + static_cast<std::ptrdiff_t>(m), 0.0);
  RankTest test;
  test.statistic = rank_sum - static_cast<double>(m * (m + 1)) / 2;
  if (tie_term == 0 && m <= kExactMannWhitneyMax && n <= kExactMannWhitneyMax) {
    test.exact = true;
    test.p_value = two_sided_exact_p(mann_whitney_null_counts(m, n), static_cast<size_t>(std::lround(test.statistic)));
    return test;
  }
  const double total = static_cast<double>(m + n);
  const double mean = static_cast<double>(m * n) / 2;
  const double variance =
      static_cast<double>(m * n) / 12 * ((total + 1) - tie_term / (total * (total - 1)));
  if (variance <= 0) return test;  // every value equal: no evidence either way
  const double distance = std::max(0.0, std::fabs(test.statistic - mean) - 0.5);
  test.p_value = std::min(1.0, two_sided_normal_p(distance / std::sqrt(variance)));
  return test;
}

RankTest wilcoxon_signed_rank(std::span<const double> differences) {
  std::vector<double> magnitudes;
  std::vector<bool> positive;
  for (double d : differences) {
    if (d == 0) continue;
    magnitudes.push_back(std::fabs(d));
    positive.push_back(d > 0);
  }
  RankTest test;
  const size_t n = magnitudes.size();
  if (n == 0) return test;
  double tie_term = 0;
  const std::vector<double> ranks = average_ranks(magnitudes, tie_term);
  for (size_t i = 0; i < n; ++i) {
    if (positive[i]) test.statistic += ranks[i];
  }
  if (tie_term == 0 && n <= kExactSignedRankMax) {
    test.exact = true;
    test.p_value = two_sided_exact_p(signed_rank_null_counts(n), static_cast<size_t>(std::lround(test.statistic)));
    return test;
  }
  const double nn = static_cast<double>(n);
  const double mean = nn * (nn + 1) / 4;
  const double variance = nn * (nn + 1) * (2 * nn + 1) / 24 - tie_term / 48;
  if (variance <= 0) return test;
  const double distance = std::max(0.0, std::fabs(test.statistic - mean) - 0.5);
  test.p_value = std::min(1.0, two_sided_normal_p(distance / std::sqrt(variance)));
  return test;
}

std::optional<SignedRankInterval> signed_rank_interval(std::span<const double> differences, double confidence) {
  const size_t n = differences.size();
  if (n < 2) return std::nullopt;
  std::vector<double> walsh;
  walsh.reserve(n * (n + 1) / 2);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i; j < n; ++j) walsh.push_back((differences[i] + differences[j]) / 2);
  }
  std::sort(walsh.begin(), walsh.end());
  const size_t m = walsh.size();
  const double tail = (1 - confidence) / 2;
  // C: the most Walsh averages that may be cut from each end, P(W+ <= C - 1) <= tail.
  size_t cut = 0;
  double achieved = 1;
  if (n <= kExactSignedRankMax) {
    const std::vector<double> counts = signed_rank_null_counts(n);
    const double total = std::ldexp(1.0, static_cast<int>(n));
    double cumulative = 0;
    for (size_t c = 0; c < counts.size(); ++c) {
      if ((cumulative + counts[c]) / total > tail) break;
      cumulative += counts[c];
      cut = c + 1;
      achieved = 1 - 2 * cumulative / total;
    }
  } else {
    const double nn = static_cast<double>(n);
    const double sd = std::sqrt(nn * (nn + 1) * (2 * nn + 1) / 24);
    const double quantile = -student_t_quantile(tail, 1e6);  // the normal quantile
    const double c = std::floor(nn * (nn + 1) / 4 - quantile * sd);
    cut = c > 0 ? static_cast<size_t>(c) : 0;
    achieved = confidence;
  }
  if (cut == 0) return std::nullopt;
  return SignedRankInterval{median_of(walsh), {walsh[cut - 1], walsh[m - cut]}, achieved};
}

double geometric_mean_of_logs(std::span<const double> log_ratios) { return std::exp(mean(log_ratios)); }

uint64_t seed_from_text(std::string_view text, uint64_t base_seed) {
  uint64_t hash = 14695981039346656037ull ^ base_seed;  // FNV-1a 64
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace infertune
