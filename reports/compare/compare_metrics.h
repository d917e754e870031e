#pragma once
// The metrics `infertune compare` knows, by the short names of --metric, with the store's names
// (sweeps/store/metric_names.h) and which way is better. Throughputs: higher is better; latencies: lower.
// A comparison is always "is the candidate worse": for a throughput, a ratio candidate / baseline below 1;
// for a latency, above 1.
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"

namespace infertune {

struct CompareMetric {
  std::string_view name;        // --metric name: tg, pp, pg, aggregate, ttft, itl, e2e, load
  std::string_view store_name;  // tg_tps, ...; pg_tps exists only in compare --bin (bench's pp+tg tests)
  std::string_view unit;        // "t/s", "ms"
  bool higher_is_better = true;
};

const std::vector<CompareMetric>& known_compare_metrics();

// A comma list of short or store names ("tg,pp,ttft", "tg_tps"); "all" for every one. Errors name the
// unknown word and list the known ones.
Result<std::vector<CompareMetric>> parse_metric_list(std::string_view text);

// What is compared without --metric: the throughputs (tg, pp, pg, aggregate), each where both sides have it.
std::vector<CompareMetric> default_compare_metrics();

const CompareMetric* find_compare_metric(std::string_view store_name);

}  // namespace infertune
