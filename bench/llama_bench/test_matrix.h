#pragma once
// The tests of a bench run: the cartesian product of the parameter lists, in llama-bench's order. The
// outer loops go model, -ngl, -mmp, -b, -ub, -ctk, -ctv, -fa, -t, -C, --cpu-strict, -d, --poll (so a model
// is loaded once for all its tests); inside, one test per -p value, then per -n value, then per -pg pair
// (a 0 in -p or -n, or a 0,0 pair, adds no test). Repetitions run back to back within a test, as in
// llama-bench, not interleaved across tests.
#include <string>
#include <vector>

#include "bench/llama_bench/bench_params.h"

namespace infertune {

struct BenchTest {
  std::string model;  // path
  int n_prompt = 0;   // tokens evaluated as one prompt (in -b pieces) from the cache at depth n_depth
  int n_gen = 0;      // one-token steps after the prompt
  int n_depth = 0;    // tokens already in the cache before the timed part (untimed prefill)
  int n_batch = 2048;
  int n_ubatch = 512;
  std::string type_k;
  std::string type_v;
  int n_threads = kAutoThreads;  // as given; <= 0: the physical cores
  std::string cpu_mask;          // "" : none
  bool cpu_strict = false;
  int poll = kDefaultPoll;
  int n_gpu_layers = 0;
  FlashAttn flash_attn = FlashAttn::autodetect;
  bool use_mmap = true;

  // The positions the test needs: n_depth + n_prompt + n_gen (llama-bench's n_ctx).
  int n_ctx() const { return n_depth + n_prompt + n_gen; }
  // Whether `other` runs on the same loaded model (same file, -ngl and -mmp).
  bool same_model_load(const BenchTest& other) const;
};

// llama-bench's test names: "pp512", "tg128", "pp512+tg128", with " @ d512" at a depth.
std::string test_name(const BenchTest& test);

std::vector<BenchTest> expand_tests(const BenchParams& params);

}  // namespace infertune
