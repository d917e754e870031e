#pragma once
// Where a series of measurements changed level: the builds after which a configuration got faster or slower.
//
// The series is short (often 3 to 30 builds) and noisy, with a few raw samples per point (a build's
// repetitions). The method:
//   1. Binary segmentation: in a segment of points, every boundary k splits it into points [a, k) and
//      [k, b); a split is a candidate when the levels (median of the points' medians) on its two sides
//      differ by at least min_relative_change. The candidate whose raw samples differ most clearly by the
//      Mann-Whitney test (smallest p, rank_sum_test.h) is the proposed change.
//   2. Its significance is a permutation test of that whole search: the segment's raw samples shuffled
//      across its points (`permutations` times, a fixed seed so the same series always gives the same
//      answer) and the smallest p over every split recomputed. Taking the best of many splits finds a
//      "change" in pure noise; comparing against the best of the shuffled splits accounts for that, where a
//      single test's p would not. Accepted when that permutation p is at most `alpha`; then both sides are
//      searched again.
//   3. Levels are recomputed on the final segments, and a change whose final before/after levels differ by
//      less than min_relative_change is dropped (merging its segments), so every reported change is both
//      significant and at least the minimum effect.
// Rank tests, not means: timings are skewed with rare slow outliers, and one wild repetition must not make
// a change. Medians of point medians as levels: every build weighs the same, whatever its repetitions.
// The permutation treats a point's samples as exchangeable with its neighbours' under "no change"; drift
// between sweeps larger than the repetitions' own noise breaks that, and the minimum effect (3% by default)
// is what keeps such drift from being called a change: raise it on a noisy host.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace infertune {

struct ChangePointOptions {
  double min_relative_change = 0.03;  // |after / before - 1| must reach this
  double alpha = 0.01;                // the permutation p must be at most this
  int permutations = 999;             // p resolution: 1 / (permutations + 1)
  uint64_t seed = 0x5eed'c4a9'e001ULL;
};

struct ChangePoint {
  size_t index = 0;            // the first point after the change (an index into the input points)
  double before_level = 0;     // median of the point medians from the previous change (or the start) to here
  double after_level = 0;      // ... from here to the next change (or the end)
  double relative_change = 0;  // after_level / before_level - 1
  double p_value = 1;          // the permutation test's p when the change was found
};

// `points`: each point's raw samples (any order). Points without samples (a failed trial) are skipped: they
// neither start nor end a segment, and no change is reported at them. Changes come in index order.
std::vector<ChangePoint> detect_change_points(std::span<const std::vector<double>> points,
                                              const ChangePointOptions& options = {});

}  // namespace infertune
