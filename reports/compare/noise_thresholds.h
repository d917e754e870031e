#pragma once
// Thresholds from A/A runs (--noise-from AA.db): what the same build on the same host really varies by
// from one run to the next. The A/A store holds two or more sweeps of the same spec and build on one host
// (`infertune sweep spec.yaml --db aa.db`, twice). For each such group, each pair of consecutive sweeps and
// each configuration both ran, the ratio of the medians of each metric is an A/A ratio; a metric's threshold
// is the 95th percentile of |ratio - 1| over all of them (the worsening an unchanged build shows 1 time in
// 20), but at least `floor`. A metric the A/A runs do not have keeps the --threshold default.
//
// Why run-to-run and not within-run spread: the interval of each comparison already covers the noise
// between repetitions; what it cannot see is what changes between two runs (frequency, memory placement,
// the page cache, a neighbour), and a gate tighter than that fails unchanged code.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "kernels/result.h"

namespace infertune {

struct NoiseThresholds {
  std::map<std::string, double> by_metric;    // store metric name -> fraction
  std::map<std::string, size_t> ratio_count;  // A/A ratios behind each
  std::vector<std::string> host_fingerprints;  // the hosts the A/A groups ran on
  std::string description;                     // "A/A runs in aa.db: 2 groups, 3 sweep pairs"
};

Result<NoiseThresholds> noise_thresholds_from_store(const std::filesystem::path& path, double floor);

// The threshold from a set of A/A ratios: max(floor, 95th percentile of |ratio - 1|).
double threshold_from_aa_ratios(const std::vector<double>& ratios, double floor);

}  // namespace infertune
