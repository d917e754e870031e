#pragma once
// What the one-sequence workloads (pp, tg, pp+tg, each at a depth) share: the cache brought back to the
// depth before each run, and one-token steps timed one by one.
#include <chrono>
#include <vector>

#include "bench/llama_bench/token_feed.h"
#include "engine/context/context.h"
#include "kernels/result.h"
#include "sweeps/trial/trial_workload.h"

namespace infertune {

using TrialClock = std::chrono::steady_clock;

inline double ms_between(TrialClock::time_point from, TrialClock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// The depth is computed (untimed, in -b pieces) before the first run only; later runs drop what the run
// before added (seq_rm from the depth on), which leaves the same cache contents (as bench does).
class DepthStart {
 public:
  DepthStart(int depth, int n_batch) : depth_(depth), n_batch_(n_batch) {}
  Status reset(Context& ctx, RandomTokens& tokens);

 private:
  int depth_;
  int n_batch_;
  bool filled_ = false;
};

// `n` one-token steps of sequence 0, the milliseconds of each appended to `step_ms`.
Status timed_gen_steps(Context& ctx, int n, RandomTokens& tokens, std::vector<double>& step_ms);

// The samples of generated steps after `lead_ms` of prompt: ttft_ms (lead + the first step), itl_ms (every
// later step: the gap between two tokens), tg_tps (steps / their time) and the weight bandwidth. Returns
// tg_tps.
double add_generation_samples(SampleSink& sink, const std::vector<double>& step_ms, double lead_ms,
                              const WeightTraffic& traffic);

}  // namespace infertune
