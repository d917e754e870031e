#pragma once
// The figures of one load level: latency percentiles (time to first token, gaps between streamed tokens,
// time per output token, end to end), throughput, errors and goodput under the service-level objective.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench/loadgen/load_runner.h"

namespace infertune {

struct Percentiles {
  double p50 = 0, p95 = 0, p99 = 0, mean = 0;
};

// Linear interpolation between order statistics (numpy's default); all zero for no values.
Percentiles percentiles(std::vector<double> values);

struct LevelSummary {
  LoadLevel level;
  uint32_t requests = 0;
  uint32_t errors = 0;
  std::string first_error{};
  Percentiles ttft_s{}, itl_s{}, tpot_s{}, e2e_s{};
  double output_tokens_per_s = 0;  // every successful request's output tokens over the level's wall time
  double requests_per_s = 0;
  uint64_t output_tokens = 0;
  uint64_t prompt_tokens = 0;
  // Requests that met the SLO (TTFT <= slo_ttft and TPOT <= slo_itl; no SLO given: every successful one), per
  // second of the level, and their share of all requests.
  double goodput_rps = 0;
  double slo_attainment = 0;
  double wall_s = 0;
};

LevelSummary summarize(const LevelRun& run, const LoadOptions& options);

}  // namespace infertune
