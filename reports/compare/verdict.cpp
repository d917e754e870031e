#include "reports/compare/verdict.h"

#include <algorithm>

namespace infertune {

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass: return "PASS";
    case Verdict::warn: return "WARN";
    case Verdict::inconclusive: return "INCONCLUSIVE";
    case Verdict::fail: return "FAIL";
  }
  return "?";
}

int exit_status_of(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass: return 0;
    case Verdict::warn: return 1;
    case Verdict::fail: return 2;
    case Verdict::inconclusive: return 3;
  }
  return kCompareErrorExitStatus;
}

Verdict most_severe(Verdict a, Verdict b) { return std::max(a, b); }

double worsening_of(double ratio, bool higher_is_better) { return higher_is_better ? 1 - ratio : ratio - 1; }

Verdict decide_verdict(const VerdictInput& input) {
  if (!input.ratio_interval) return Verdict::inconclusive;
  const double a = worsening_of(input.ratio_interval->low, input.higher_is_better);
  const double b = worsening_of(input.ratio_interval->high, input.higher_is_better);
  const double least_worse = std::min(a, b);
  const double most_worse = std::max(a, b);
  const bool significant = !input.p_value || *input.p_value < input.alpha;
  // A ratio exactly at the bound (0.95 for 5%) is within it, whatever the last bit of 1 - 0.95 says.
  constexpr double kRounding = 1e-12;
  if (least_worse > input.threshold + kRounding) return significant ? Verdict::fail : Verdict::inconclusive;
  if (most_worse > input.threshold + kRounding) return Verdict::inconclusive;
  if (least_worse > std::min(input.warn_margin, input.threshold) && significant) return Verdict::warn;
  return Verdict::pass;
}

}  // namespace infertune
