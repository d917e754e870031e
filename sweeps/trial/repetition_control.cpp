#include "sweeps/trial/repetition_control.h"

#include <algorithm>
#include <cmath>

#include "sweeps/store/statistics.h"

namespace infertune {

bool ci_within_target(std::span<const double> values, double ci_target) {
  if (values.size() < 2) return false;
  const double m = mean(values);
  const auto half_width = ci95_half_width(values.size(), sample_stddev(values));
  if (!half_width || !std::isfinite(*half_width) || m == 0 || !std::isfinite(m)) return false;
  return *half_width <= ci_target * std::abs(m);
}

RepetitionDecision next_repetition(std::span<const double> values, const RepetitionRule& rule) {
  const int min_reps = std::max(rule.min_reps, 1);
  const int max_reps = std::max(rule.max_reps, min_reps);
  const int n = static_cast<int>(values.size());
  if (n < min_reps) return RepetitionDecision::Continue;
  // At min_reps = 1 a single value has no interval: it stops only at max_reps (or with a second value).
  if (ci_within_target(values, rule.ci_target)) return RepetitionDecision::CiTargetMet;
  return n >= max_reps ? RepetitionDecision::MaxReps : RepetitionDecision::Continue;
}

}  // namespace infertune
