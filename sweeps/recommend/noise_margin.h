#pragma once
// The winner's margin over the runner-up and whether it is within noise. The rule: the margin is within
// noise when the two 95% confidence intervals (score ± ci95_half_width, Student t over the repetitions, as
// the store summarizes them) overlap; it is unknown when either score has no interval (one repetition).
// Overlapping intervals are the conservative reading: a difference outside both intervals is one a rerun
// would very likely reproduce, one inside them may not be.
#include "sweeps/recommend/recommend.h"

namespace infertune {

// higher_is_better: throughput (margin = winner / runner-up - 1); otherwise latency (runner-up / winner - 1).
Margin compute_margin(const Estimate& winner, const Estimate& runner_up, bool higher_is_better);

}  // namespace infertune
