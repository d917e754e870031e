#pragma once
// What is the same for every row of a bench run: build, CPU, GPUs, backends, and the host probe's read
// bandwidth for roofline % (read from the probe cache, measured once when there is none).
#include "bench/llama_bench/bench_params.h"
#include "bench/llama_bench/bench_progress.h"
#include "bench/llama_bench/bench_result.h"

namespace infertune {

// A probe that cannot be had is a warning (roofline % stays empty), not an error.
RunInfo gather_run_info(const BenchParams& params, BenchProgress& progress);

}  // namespace infertune
