#include "reports/history/change_points.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <tuple>

#include "reports/history/rank_sum_test.h"

namespace infertune {
namespace {

// The median (0 when empty): the mean of the middle two for an even count.
double median_value(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

// The points that have samples, as the search sees them.
struct Points {
  std::vector<size_t> input_index;           // [points]: where the point is in the caller's series
  std::vector<std::vector<double>> samples;  // [points][samples]
  std::vector<double> medians;               // [points]
};

Points points_with_samples(std::span<const std::vector<double>> input) {
  Points points;
  for (size_t i = 0; i < input.size(); ++i) {
    if (input[i].empty()) continue;
    points.input_index.push_back(i);
    points.samples.push_back(input[i]);
    points.medians.push_back(median_value(input[i]));
  }
  return points;
}

// Median of the point medians in [first, last).
double level(const Points& points, size_t first, size_t last) {
  return median_value(
      {points.medians.begin() + static_cast<ptrdiff_t>(first), points.medians.begin() + static_cast<ptrdiff_t>(last)});
}

// after / before - 1; none when the before level is not positive (no relative change is defined).
std::optional<double> relative_change(double before, double after) {
  if (!(before > 0)) return std::nullopt;
  return after / before - 1;
}

// Uniform in [0, n) from the generator's raw output (std::uniform_int_distribution differs between standard
// libraries; this keeps the permutations, and so the answers, the same everywhere).
uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t draw = rng();
  while (draw >= limit) draw = rng();
  return draw % n;
}

struct FoundChange {
  size_t point = 0;  // the first point after the change (in Points numbering)
  double p_value = 1;
};

// One segment [first, last) of points: its best candidate split and whether the permutation test accepts it.
class SegmentSearch {
 public:
  using NullCache = std::map<std::tuple<size_t, size_t, double>, RankSumNull>;

  SegmentSearch(const Points& points, size_t first, size_t last, const ChangePointOptions& options, NullCache& nulls)
      : points_(points), first_(first), last_(last), options_(options), nulls_(nulls) {}

  std::optional<FoundChange> run() {
    const std::vector<size_t> candidates = candidate_splits();
    if (candidates.empty()) return std::nullopt;  // nothing big enough: no need to rank or count anything
    prepare_ranks();
    const std::vector<double> p = split_p_values(ranks_);
    size_t best = candidates.front();
    for (size_t i : candidates) {
      if (p[i] < p[best] || (p[i] == p[best] && effects_[i] > effects_[best])) best = i;
    }
    const auto p_value = permutation_p(p[best]);
    if (!p_value) return std::nullopt;
    return FoundChange{first_ + 1 + best, *p_value};
  }

 private:
  // The split's p for rank order `ranks`, for every split (index i: the split before point first + 1 + i).
  std::vector<double> split_p_values(const std::vector<double>& ranks) const {
    std::vector<double> p(split_offsets_.size());
    double rank_sum = 0;
    size_t taken = 0;
    for (size_t i = 0; i < split_offsets_.size(); ++i) {
      for (; taken < split_offsets_[i]; ++taken) rank_sum += ranks[taken];
      const double m = static_cast<double>(taken);
      p[i] = split_nulls_[i]->two_sided_p(rank_sum - m * (m + 1) / 2);
    }
    return p;
  }

  // The splits whose levels differ by at least the minimum effect (index i: before point first + 1 + i).
  std::vector<size_t> candidate_splits() {
    std::vector<size_t> candidates;
    for (size_t k = first_ + 1; k < last_; ++k) {
      const auto change = relative_change(level(points_, first_, k), level(points_, k, last_));
      effects_.push_back(change ? std::abs(*change) : 0);
      if (change && effects_.back() >= options_.min_relative_change) candidates.push_back(k - first_ - 1);
    }
    return candidates;
  }

  // The segment's samples ranked together, and the null distribution of each split's sizes.
  void prepare_ranks() {
    std::vector<double> values;
    for (size_t p = first_; p < last_; ++p) {
      if (p > first_) split_offsets_.push_back(values.size());
      values.insert(values.end(), points_.samples[p].begin(), points_.samples[p].end());
    }
    ranks_ = mid_ranks(values);
    const double ties = tie_term(values);
    for (size_t m : split_offsets_) {
      const auto key = std::make_tuple(m, values.size() - m, ties);
      auto it = nulls_.find(key);
      if (it == nulls_.end()) it = nulls_.emplace(key, RankSumNull(m, values.size() - m, ties)).first;
      split_nulls_.push_back(&it->second);
    }
  }

  // The share of shuffles whose best split (any split: the shuffled data's effects are not recomputed, which
  // only makes the test stricter) is at least as clear as the observed one; none once it exceeds alpha.
  std::optional<double> permutation_p(double observed_p) const {
    const int rounds = std::max(1, options_.permutations);
    const double needed = options_.alpha * (rounds + 1);
    std::mt19937_64 rng(options_.seed ^ (first_ * 0x9e3779b97f4a7c15ULL + last_));
    std::vector<double> shuffled = ranks_;
    int as_clear = 0;
    for (int round = 0; round < rounds; ++round) {
      for (size_t i = shuffled.size(); i > 1; --i) std::swap(shuffled[i - 1], shuffled[uniform_below(rng, i)]);
      const std::vector<double> p = split_p_values(shuffled);
      if (*std::min_element(p.begin(), p.end()) <= observed_p * (1 + 1e-9)) ++as_clear;
      if (as_clear + 1 > needed) return std::nullopt;
    }
    return static_cast<double>(as_clear + 1) / (rounds + 1);
  }

  const Points& points_;
  size_t first_ = 0;
  size_t last_ = 0;
  const ChangePointOptions& options_;
  NullCache& nulls_;
  std::vector<double> effects_;                  // [splits]: |relative change| of the levels, 0 when undefined
  std::vector<double> ranks_;                    // [samples of the segment, in point order]
  std::vector<size_t> split_offsets_;            // [splits]: samples before the split
  std::vector<const RankSumNull*> split_nulls_;  // [splits]
};

std::vector<FoundChange> binary_segmentation(const Points& points, const ChangePointOptions& options) {
  SegmentSearch::NullCache nulls;
  std::vector<FoundChange> found;
  std::vector<std::pair<size_t, size_t>> segments{{0, points.medians.size()}};
  while (!segments.empty()) {
    const auto [first, last] = segments.back();
    segments.pop_back();
    if (last - first < 2) continue;
    const auto change = SegmentSearch(points, first, last, options, nulls).run();
    if (!change) continue;
    found.push_back(*change);
    segments.push_back({first, change->point});
    segments.push_back({change->point, last});
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.point < b.point; });
  return found;
}

// Levels of the final segments around each change; the smallest change under the minimum effect is merged
// away and the levels recomputed, until every change reaches it.
std::vector<ChangePoint> with_final_levels(const Points& points, std::vector<FoundChange> found,
                                           const ChangePointOptions& options) {
  for (;;) {
    std::vector<ChangePoint> changes;
    std::optional<size_t> weakest;
    double weakest_effect = 0;
    for (size_t i = 0; i < found.size(); ++i) {
      const size_t start = i == 0 ? 0 : found[i - 1].point;
      const size_t end = i + 1 == found.size() ? points.medians.size() : found[i + 1].point;
      ChangePoint c;
      c.index = points.input_index[found[i].point];
      c.before_level = level(points, start, found[i].point);
      c.after_level = level(points, found[i].point, end);
      const double effect = relative_change(c.before_level, c.after_level).value_or(0);
      c.relative_change = effect;
      c.p_value = found[i].p_value;
      changes.push_back(c);
      if (std::abs(effect) < options.min_relative_change && (!weakest || std::abs(effect) < weakest_effect)) {
        weakest = i;
        weakest_effect = std::abs(effect);
      }
    }
    if (!weakest) return changes;
    found.erase(found.begin() + static_cast<ptrdiff_t>(*weakest));
  }
}

}  // namespace

std::vector<ChangePoint> detect_change_points(std::span<const std::vector<double>> input,
                                              const ChangePointOptions& options) {
  const Points points = points_with_samples(input);
  return with_final_levels(points, binary_segmentation(points, options), options);
}

}  // namespace infertune
