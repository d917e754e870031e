#pragma once
// loadgen's load levels as a sweep of the results store (`infertune loadgen --db FILE`), so that `report`,
// `export` and `compare` read a server's measured serving figures like any sweep's: one sweep per loadgen run
// (its spec: the options as YAML, its hash theirs), one trial per level. A trial's config names the endpoint and
// model and a "serve" workload (prompt tokens, max tokens, clients or arrival rate, the objective); its samples,
// one repetition: per request ttft_ms, itl_ms (each gap between streamed tokens) and e2e_ms, per level
// aggregate_tps, request_rps and goodput_rps (metric_names.h). A level whose every request failed is a failed
// trial with the first error as its reason.
#include <cstdint>
#include <vector>

#include "bench/loadgen/load_options.h"
#include "bench/loadgen/load_runner.h"
#include "bench/loadgen/load_summary.h"
#include "kernels/result.h"
#include "sweeps/store/results_store.h"

namespace infertune {

// Records the levels (runs[i] summarized as summaries[i]) measured from the host `host_id` by build `build_id`;
// returns the new sweep's id.
Result<int64_t> record_load_levels(ResultsStore& store, int64_t host_id, int64_t build_id, const LoadOptions& options,
                                   const std::vector<LevelRun>& runs, const std::vector<LevelSummary>& summaries);

}  // namespace infertune
