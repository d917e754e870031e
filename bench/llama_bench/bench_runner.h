#pragma once
// Runs bench tests one after another, as llama-bench does: the model is loaded once for consecutive tests
// that share it (file, -ngl, -mmp); every test gets its own placed thread pool (-t, -C, --cpu-strict,
// --poll, --numa, --prio) and a Context of n_depth + n_prompt + n_gen positions; then an untimed warmup
// (the prompt once, one generated token) unless --no-warmup, then -r timed repetitions back to back.
// Each repetition starts from the cache at depth -d (filled untimed, once per test) and times the prompt
// (random token ids, decoded in -b pieces) and the -n one-token steps (random ids; no sampling).
// A test that cannot run comes back as a result with its error; nothing here aborts the run.
#include <optional>
#include <string>

#include "bench/llama_bench/bench_params.h"
#include "bench/llama_bench/bench_progress.h"
#include "bench/llama_bench/bench_result.h"
#include "bench/llama_bench/model_facts.h"
#include "bench/llama_bench/test_matrix.h"
#include "engine/gpu/gpu_weight_cache.h"
#include "engine/model/model.h"

namespace infertune {

class BenchRunner {
 public:
  // `params` and `progress` must outlive the runner.
  BenchRunner(const BenchParams& params, BenchProgress& progress) : params_(params), progress_(progress) {}

  // `index` is the test's place in the run (for progress).
  BenchResult run(const BenchTest& test, size_t index);

 private:
  Status measure(const BenchTest& test, size_t index, BenchResult& result);
  // Loads the test's model unless the one loaded (or failed) last is the same load.
  Status ensure_model(const BenchTest& test, size_t index);

  const BenchParams& params_;
  BenchProgress& progress_;
  std::optional<BenchTest> loaded_for_;  // the test whose model load is current
  std::optional<Model> model_;
  GpuWeightCache gpu_weights_;  // the offloaded layers of model_, kept for the next test with the same -ngl
  std::optional<ModelFacts> facts_;
  std::string load_error_;
};

}  // namespace infertune
