#pragma once
// A measured throughput: the best and the median over repetitions of a fixed amount of work. The best is
// the figure to plan with (least disturbed by other load); the median says how noisy the host was.
#include <vector>

namespace infertune {

struct Rate {
  unsigned threads = 0;
  unsigned repetitions = 0;
  double best = 0;  // units per second; the unit is named where the rate is declared
  double median = 0;
  bool operator==(const Rate&) const = default;
};

// `work` units were done in every repetition; seconds[i] is how long repetition i took. Repetitions that
// took no measurable time are ignored.
Rate summarize_rate(double work, const std::vector<double>& seconds, unsigned threads);

}  // namespace infertune
