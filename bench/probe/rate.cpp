#include "bench/probe/rate.h"

#include <algorithm>

namespace infertune {

Rate summarize_rate(double work, const std::vector<double>& seconds, unsigned threads) {
  std::vector<double> rates;
  for (double s : seconds) {
    if (s > 0) rates.push_back(work / s);
  }
  Rate rate;
  rate.threads = threads;
  rate.repetitions = static_cast<unsigned>(rates.size());
  if (rates.empty()) return rate;
  std::sort(rates.begin(), rates.end());
  const size_t n = rates.size();
  rate.best = rates.back();
  rate.median = n % 2 ? rates[n / 2] : 0.5 * (rates[n / 2 - 1] + rates[n / 2]);
  return rate;
}

}  // namespace infertune
