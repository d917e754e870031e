#include "reports/history/rank_sum_test.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace infertune {
namespace {

// Counting the exact table costs about L * s * s * L / 2 steps (s, L: the smaller and larger group). It is
// counted where the normal approximation is poor, a small group; past 20 values on both sides (or past this
// cost, when the large side is long) the approximation is accurate enough.
constexpr size_t kMaxExactSmallGroup = 20;
constexpr double kMaxExactSteps = 4e6;

// P(U <= u) for u = 0..s*L: U is the number of (small, large) pairs with the small-group value larger, so
// its arrangements are the s values 0 <= a_1 <= ... <= a_s <= L (each a_i: the large values below the
// i-th small one) with sum u. Counted by adding part sizes v = 0..L, each any number of times.
std::vector<double> exact_lower_cdf(size_t s, size_t large) {
  const size_t max_u = s * large;
  std::vector<std::vector<double>> ways(s + 1, std::vector<double>(max_u + 1, 0.0));  // [parts][sum]
  ways[0][0] = 1;
  for (size_t v = 0; v <= large; ++v) {
    for (size_t parts = 1; parts <= s; ++parts) {
      // parts values of at most v sum to at most parts * v
      const size_t top = std::min(max_u, parts * v);
      for (size_t u = v; u <= top; ++u) ways[parts][u] += ways[parts - 1][u - v];
    }
  }
  std::vector<double>& counts = ways[s];
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  double running = 0;
  for (double& c : counts) {
    running += c;
    c = std::min(1.0, running / total);
  }
  return std::move(counts);
}

}  // namespace

std::vector<double> mid_ranks(std::span<const double> values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t first = 0; first < order.size();) {
    size_t last = first + 1;
    while (last < order.size() && values[order[last]] == values[order[first]]) ++last;
    const double shared = (static_cast<double>(first + 1) + static_cast<double>(last)) / 2;
    for (size_t i = first; i < last; ++i) ranks[order[i]] = shared;
    first = last;
  }
  return ranks;
}

double tie_term(std::span<const double> values) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  double term = 0;
  for (size_t first = 0; first < sorted.size();) {
    size_t last = first + 1;
    while (last < sorted.size() && sorted[last] == sorted[first]) ++last;
    const double t = static_cast<double>(last - first);
    term += t * t * t - t;
    first = last;
  }
  return term;
}

RankSumNull::RankSumNull(size_t m, size_t n, double ties) : m_(m), n_(n) {
  const double mn = static_cast<double>(m) * static_cast<double>(n);
  const double total = static_cast<double>(m + n);
  mean_ = mn / 2;
  if (total > 1) sd_ = std::sqrt(std::max(0.0, mn / 12 * ((total + 1) - ties / (total * (total - 1)))));
  const double small = static_cast<double>(std::min(m, n));
  const double large = static_cast<double>(std::max(m, n));
  // The table counts arrangements of distinct values; with ties it would be the wrong distribution.
  if (ties == 0 && m > 0 && n > 0 && small <= kMaxExactSmallGroup &&
      (large + 1) * small * small * large / 2 <= kMaxExactSteps) {
    lower_cdf_ = exact_lower_cdf(std::min(m, n), std::max(m, n));
  }
}

double RankSumNull::two_sided_p(double u) const {
  if (m_ == 0 || n_ == 0) return 1;
  if (exact()) {
    // U's distribution is symmetric about mn/2, so P(U >= c) = P(U <= mn - c).
    const double max_u = static_cast<double>(lower_cdf_.size() - 1);
    const double below = std::clamp(std::floor(u + 1e-9), 0.0, max_u);
    const double above = std::clamp(max_u - std::ceil(u - 1e-9), 0.0, max_u);
    const double tail = std::min(lower_cdf_[static_cast<size_t>(below)], lower_cdf_[static_cast<size_t>(above)]);
    return std::min(1.0, 2 * tail);
  }
  if (sd_ <= 0) return 1;  // every value tied: no evidence of a difference
  const double z = std::max(0.0, std::abs(u - mean_) - 0.5) / sd_;
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

double mann_whitney_p(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty()) return 1;
  std::vector<double> all(a.begin(), a.end());
  all.insert(all.end(), b.begin(), b.end());
  const std::vector<double> ranks = mid_ranks(all);
  const double rank_sum = std::accumulate(ranks.begin(), ranks.begin() + static_cast<ptrdiff_t>(a.size()), 0.0);
  const double m = static_cast<double>(a.size());
  return RankSumNull(a.size(), b.size(), tie_term(all)).two_sided_p(rank_sum - m * (m + 1) / 2);
}

}  // namespace infertune
