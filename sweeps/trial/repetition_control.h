#pragma once
// The stopping rule of a trial's repetitions (issue 6: "repetitions until the confidence interval of the
// mean is within --ci-target or --max-reps is reached"), as a pure function of the main metric's values so
// far: never fewer than min_reps, never more than max_reps, and in between stop as soon as the 95%
// confidence interval's half-width (Student t, n - 1 degrees of freedom) is at most ci_target x |mean|.
#include <span>

namespace infertune {

struct RepetitionRule {
  int min_reps = 3;
  int max_reps = 10;
  double ci_target = 0.03;
};

enum class RepetitionDecision {
  Continue,     // run another repetition
  CiTargetMet,  // the interval is narrow enough (and min_reps are done)
  MaxReps,      // max_reps done without meeting the target
};

// Whether the 95% CI half-width of the mean of `values` is within `ci_target` of |mean|: false for fewer
// than two values (no interval) and for a mean of 0 (no relative width), true for identical values.
bool ci_within_target(std::span<const double> values, double ci_target);

// The decision after the repetitions whose main-metric values are `values` (in the order measured).
// A min_reps below 1 counts as 1, a max_reps below min_reps as min_reps.
RepetitionDecision next_repetition(std::span<const double> values, const RepetitionRule& rule);

}  // namespace infertune
