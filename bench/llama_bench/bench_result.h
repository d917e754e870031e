#pragma once
// One row of bench output: the test, what was measured (every repetition's time in ns) or why it could not
// run, and the figures derived from the samples. RunInfo holds what is the same for every row.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/llama_bench/bench_params.h"
#include "bench/llama_bench/model_facts.h"
#include "bench/llama_bench/test_matrix.h"
#include "engine/arch/op_profile.h"

namespace infertune {

// The host probe's read bandwidth (best of its runs), for roofline %.
struct ReadBandwidth {
  double one_core_gbps = 0;
  double all_cores_gbps = 0;
  // [CUDA device index]: each GPU's measured copy bandwidth (the probe's, bench/probe/gpu_peak.h), 0 where
  // it was not measured; empty without GPUs. The roofline of -ngl > 0 tests.
  std::vector<double> gpu_gbps;
  // What `threads` threads can read: a core's worth each, up to all cores' (one thread cannot use the whole
  // machine's memory system, so its roofline is one core's figure).
  double for_threads(unsigned threads) const;
};

struct RunInfo {
  std::string build_commit;
  int64_t build_number = 0;                     // commits in the build's history (git rev-list --count), as llama.cpp's
  std::string cpu_info;                         // CPU model name
  std::string gpu_info;                         // GPU names, ", "-separated; empty without one
  std::string backends;                         // "CPU"
  unsigned default_threads = 0;                 // what -t <= 0 runs on here: the physical cores with an allowed CPU
  std::optional<ReadBandwidth> read_bandwidth;  // absent: no probe
};

struct BenchResult {
  BenchTest test;
  std::optional<ModelFacts> model;   // absent when the model did not load
  unsigned threads_used = 0;         // the pool's thread count for the test (0 when it did not start)
  std::string test_time;             // RFC 3339 UTC, when the test started
  std::vector<uint64_t> samples_ns;  // [repetitions], timed part of each
  std::string error;                 // non-empty: the test could not run, and why
  // Which backend multiplied the float weights in the timed repetitions: "own", "onednn",
  // "auto(onednn K/N shapes)" (kernels/onednn/gemm_selection.h: gemm_usage_text); empty when the model
  // has no float weight matrices (quantized: our kernels only) or the test did not run.
  std::string gemm;
  // Per-op times of the timed repetitions (bench --profile; engine/arch/op_profile.h).
  std::optional<OpProfileTotals> profile;

  bool ok() const { return error.empty(); }
  int n_tokens() const { return test.n_prompt + test.n_gen; }  // tokens per timed repetition
};

// llama-bench's statistics: means, and sample standard deviations (n - 1; 0 for fewer than 2 samples).
uint64_t avg_ns(const BenchResult& result);
uint64_t stddev_ns(const BenchResult& result);
std::vector<double> samples_ts(const BenchResult& result);  // tokens per second of each repetition
double avg_ts(const BenchResult& result);
double stddev_ts(const BenchResult& result);

}  // namespace infertune
