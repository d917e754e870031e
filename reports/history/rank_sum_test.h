#pragma once
// The Mann-Whitney U (Wilcoxon rank-sum) test: do two groups of raw samples come from one distribution?
// It assumes nothing about the shape of the noise (timings are skewed, with rare slow outliers) and a few
// samples per group are enough, which suits a handful of repetitions per build.
//
// U of the first group = its rank sum - m(m+1)/2, the number of (first, second) pairs where the first is
// larger (ties count one half). p-values are two-sided. Without ties and for small groups they are exact
// (the null distribution of U counted, not approximated: at 3 vs 30 samples the normal approximation is
// 20 times too large in the tail); otherwise the normal approximation with the tie correction of the
// variance and a continuity correction, which is accurate once both groups are past about ten samples.
#include <cstddef>
#include <span>
#include <vector>

namespace infertune {

// 1-based ranks of `values` in their order; tied values share the mean of the ranks they span.
std::vector<double> mid_ranks(std::span<const double> values);

// The sum of t^3 - t over the groups of t tied values (0 when all values differ).
double tie_term(std::span<const double> values);

// The null distribution of U for groups of m and n samples drawn from N = m + n values with the given
// tie_term. Building it is the costly part (the exact table), so a caller testing many splits of the same
// sizes keeps one per size pair.
class RankSumNull {
 public:
  RankSumNull(size_t m, size_t n, double tie_term);

  // Two-sided p of the first group's U (a half-integer when there are ties).
  double two_sided_p(double u) const;
  bool exact() const { return !lower_cdf_.empty(); }

 private:
  size_t m_ = 0;
  size_t n_ = 0;
  std::vector<double> lower_cdf_;  // [m * n + 1]: P(U <= u); empty: the normal approximation
  double mean_ = 0;
  double sd_ = 0;
};

// Two-sided p of the Mann-Whitney test between `a` and `b` (1 when either is empty).
double mann_whitney_p(std::span<const double> a, std::span<const double> b);

}  // namespace infertune
