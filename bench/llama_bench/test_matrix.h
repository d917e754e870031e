#pragma once
// The tests of a bench run: the cartesian product of the parameter lists, in llama-bench's order. The
// outer loops go model, -ngl, -mmp, -b, -ub, -ctk, -ctv, -fa, -t, -C, --cpu-strict, -d, --poll (so a model
// is loaded once for all its tests), then any other setting bench takes (--numa, --prio: one value each);
// inside, one test per -p value, then per -n value, then per -pg pair (a 0 in -p or -n, or a 0,0 pair, adds
// no test). Repetitions run back to back within a test, as in llama-bench, not interleaved across tests.
#include <string>
#include <vector>

#include "bench/llama_bench/bench_params.h"
#include "engine/settings/engine_settings.h"

namespace infertune {

struct BenchTest {
  std::string model;  // path
  int n_prompt = 0;   // tokens evaluated as one prompt (in -b pieces) from the cache at depth n_depth
  int n_gen = 0;      // one-token steps after the prompt
  int n_depth = 0;    // tokens already in the cache before the timed part (untimed prefill)
  // The engine settings of the test. -tb is never set: llama-bench runs prompts on -t threads too. The
  // context's n_ctx is n_ctx() when the test runs.
  EngineSettings settings;

  // The canonical text of setting `key` ("batch_size" -> "2048").
  std::string value(std::string_view key) const;
  // The positions the test needs: n_depth + n_prompt + n_gen (llama-bench's n_ctx).
  int n_ctx() const { return n_depth + n_prompt + n_gen; }
  int n_batch() const { return static_cast<int>(settings.context.n_batch); }
  // Whether `other` runs on the same loaded model (same file, -ngl and -mmp).
  bool same_model_load(const BenchTest& other) const;
};

// llama-bench's test names: "pp512", "tg128", "pp512+tg128", with " @ d512" at a depth.
std::string test_name(const BenchTest& test);

std::vector<BenchTest> expand_tests(const BenchParams& params);

}  // namespace infertune
