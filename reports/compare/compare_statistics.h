#pragma once
// The statistics `infertune compare` bases its verdicts on (docs/compare.md says why these):
//
// - Independent sides (two stores): the ratio candidate / baseline of the medians, with a 95% percentile
//   bootstrap interval. The unit resampled is a repetition (a "group"): a repetition that holds many values
//   (every inter-token gap) is resampled whole, since its values share the repetition's conditions and are
//   not independent. The rank test is Mann-Whitney U over the groups' medians.
// - Paired blocks (`compare --bin`, ABBA): one log ratio per pair of adjacent blocks; the Hodges-Lehmann
//   estimate with the interval that inverts the Wilcoxon signed-rank test, and that test itself: the interval
//   needs no normality (only symmetry of the pairs' differences), and it excludes "no change" exactly when the
//   test rejects it, so the interval and the test of a verdict cannot contradict each other.
// - Over configurations: the geometric mean of the ratios, with an interval from the same replicates
//   (bootstrap) or the same pairs (signed-rank interval over the pairs' mean log ratios).
//
// Resampling uses std::mt19937_64, whose output the C++ standard fixes, and its own index draw (not
// std::uniform_int_distribution, which is implementation-defined), so a seed gives the same interval on
// every platform.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace infertune {

struct Interval {
  double low = 0;
  double high = 0;
};

// A median of a non-empty span (the mean of the middle two for an even count).
double median_of(std::span<const double> values);

// The median of every value of the groups together.
double pooled_median(const std::vector<std::vector<double>>& groups);

struct BootstrapRatio {
  double log_ratio = 0;                     // log(median(candidate) / median(baseline)), all values
  Interval log_interval;                    // percentile interval of the replicates at `confidence`
  std::vector<double> replicate_log_ratios; // [resamples], in draw order (the geometric mean reuses them)
};

// Groups must be non-empty and hold positive values. The same seed gives the same replicates.
BootstrapRatio bootstrap_ratio_of_medians(const std::vector<std::vector<double>>& baseline,
                                          const std::vector<std::vector<double>>& candidate, int resamples,
                                          uint64_t seed, double confidence = 0.95);

// The percentile interval of replicates (sorted copy; type 7 interpolation).
Interval percentile_interval(std::span<const double> replicates, double confidence);

struct RankTest {
  double statistic = 0;  // Mann-Whitney: U of the candidate (pairs candidate > baseline, ties half);
                         // Wilcoxon: W+, the sum of the ranks of positive differences
  double p_value = 1;    // two-sided
  bool exact = false;    // from the exact null distribution (small samples without ties)
};

// Exact when both sides have at most 20 values and there are no ties, otherwise the normal approximation
// with the tie correction of the variance and a continuity correction. Both spans non-empty.
RankTest mann_whitney_u(std::span<const double> baseline, std::span<const double> candidate);

// Over paired differences; zeros are dropped (Wilcoxon's rule). Exact for at most 25 non-zero differences
// without tied magnitudes, otherwise normal with tie and continuity corrections. No non-zero difference: p 1.
RankTest wilcoxon_signed_rank(std::span<const double> differences);

// The Hodges-Lehmann estimate of the centre of paired differences (the median of the Walsh averages
// (d_i + d_j) / 2, i <= j) with the confidence interval of the signed-rank test: [w_(C), w_(M + 1 - C)] of the
// M = n(n + 1)/2 sorted Walsh averages, C from the exact null distribution (up to 25 differences; normal
// beyond). None when n is too small for the confidence (n < 6 at 95%).
struct SignedRankInterval {
  double estimate = 0;
  Interval interval;
  double achieved_confidence = 0;  // the exact coverage the discrete distribution gives (>= confidence)
};
std::optional<SignedRankInterval> signed_rank_interval(std::span<const double> differences, double confidence = 0.95);

// exp(mean(log ratios)), the geometric mean of ratios given as logs.
double geometric_mean_of_logs(std::span<const double> log_ratios);

// A seed derived from text (the configuration key and metric), so each row's resampling is reproducible
// and does not depend on which other rows are compared.
uint64_t seed_from_text(std::string_view text, uint64_t base_seed);

}  // namespace infertune
