#pragma once
// The verdict on one comparison (a configuration's metric, or a geometric mean) and how verdicts combine
// into the command's exit status. `threshold` is the worsening the gate tolerates, as a fraction: 0.05 means
// a throughput may drop by up to 5% (ratio >= 0.95) and a latency may grow by up to 5% (ratio <= 1.05).
//
//   FAIL          the whole interval is worse than the threshold, and the rank test agrees (p < alpha)
//   WARN          worse with confidence by more than the warn margin (the interval wholly worse than a
//                 ratio of 0.99 for a throughput with the default 1%, rank test agrees) but the interval stays
//                 within the threshold: a real but tolerated slowdown. The margin keeps differences below 1%,
//                 which code layout alone produces between two builds of the same source (Mytkowicz et al.,
//                 "Producing wrong data without doing anything obviously wrong", ASPLOS 2009), from WARN,
//                 and with it an A/A run, whose interval excludes 1 one time in 40.
//   PASS          the interval excludes a worsening beyond the threshold, and not WARN
//   INCONCLUSIVE  the interval straddles the threshold (too wide to say), or it lies beyond the threshold
//                 but the rank test does not agree, or there is no interval (one block, one repetition)
//
// Overall: the most severe, ordered PASS < WARN < INCONCLUSIVE < FAIL. A CI gate must never pass a change
// it could not measure, so INCONCLUSIVE outranks WARN; and one configuration proven slower is a failure
// whatever the others say, so FAIL outranks INCONCLUSIVE.
//
// Exit status: PASS 0, WARN 1, FAIL 2, INCONCLUSIVE 3, and 4 for bad input or an error (nothing compared).
#include <optional>
#include <string_view>
#include <vector>

#include "reports/compare/compare_statistics.h"

namespace infertune {

enum class Verdict { pass, warn, inconclusive, fail };  // ascending severity

inline constexpr int kCompareErrorExitStatus = 4;

std::string_view verdict_name(Verdict verdict);  // "PASS", "WARN", "INCONCLUSIVE", "FAIL"
int exit_status_of(Verdict verdict);
Verdict most_severe(Verdict a, Verdict b);

struct VerdictInput {
  std::optional<Interval> ratio_interval;  // candidate / baseline of the metric; none: not measurable
  bool higher_is_better = true;
  double threshold = 0.05;
  std::optional<double> p_value;  // none: the interval alone decides (a geometric mean)
  double alpha = 0.05;
  double warn_margin = 0.01;  // capped at the threshold
};

Verdict decide_verdict(const VerdictInput& input);

// How much worse the candidate is for a ratio candidate / baseline, as a fraction: 0.2 is 20% worse (a
// throughput ratio of 0.8, a latency ratio of 1.2); negative: better.
double worsening_of(double ratio, bool higher_is_better);

}  // namespace infertune
