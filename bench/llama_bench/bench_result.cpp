#include "bench/llama_bench/bench_result.h"

#include <cmath>
#include <numeric>

namespace infertune {
namespace {

template <class T>
double mean(const std::vector<T>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0, [](double sum, T v) { return sum + double(v); }) /
         double(values.size());
}

template <class T>
double sample_stddev(const std::vector<T>& values) {
  if (values.size() < 2) return 0;
  const double m = mean(values);
  double squares = 0;
  for (T v : values) squares += (double(v) - m) * (double(v) - m);
  return std::sqrt(squares / double(values.size() - 1));
}

}  // namespace

uint64_t avg_ns(const BenchResult& result) { return static_cast<uint64_t>(std::llround(mean(result.samples_ns))); }

uint64_t stddev_ns(const BenchResult& result) {
  return static_cast<uint64_t>(std::llround(sample_stddev(result.samples_ns)));
}

std::vector<double> samples_ts(const BenchResult& result) {
  std::vector<double> ts;
  for (uint64_t ns : result.samples_ns) ts.push_back(ns > 0 ? 1e9 * result.n_tokens() / double(ns) : 0.0);
  return ts;
}

double avg_ts(const BenchResult& result) { return mean(samples_ts(result)); }

double stddev_ts(const BenchResult& result) { return sample_stddev(samples_ts(result)); }

}  // namespace infertune
