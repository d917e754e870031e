#include "sweeps/trial/single_sequence.h"

#include <numeric>

#include "sweeps/store/metric_names.h"

namespace infertune {

Status DepthStart::reset(Context& ctx, RandomTokens& tokens) {
  if (filled_) return ctx.kv_cache().seq_rm(0, depth_, -1);
  ctx.clear();
  if (Status s = eval_prompt(ctx, depth_, n_batch_, tokens); !s)
    return fail("filling the depth: {}", s.error().message);
  filled_ = true;
  return {};
}

Status timed_gen_steps(Context& ctx, int n, RandomTokens& tokens, std::vector<double>& step_ms) {
  std::vector<int32_t> scratch;
  for (int i = 0; i < n; ++i) {
    const auto start = TrialClock::now();
    if (Status s = eval_gen_step(ctx, tokens, scratch); !s)
      return fail("generation step {}: {}", i + 1, s.error().message);
    step_ms.push_back(ms_between(start, TrialClock::now()));
  }
  return {};
}

double add_generation_samples(SampleSink& sink, const std::vector<double>& step_ms, double lead_ms,
                              const WeightTraffic& traffic) {
  if (step_ms.empty()) return 0;
  sink.add(metric::kTimeToFirstTokenMs, lead_ms + step_ms.front());
  for (size_t i = 1; i < step_ms.size(); ++i) sink.add(metric::kInterTokenLatencyMs, step_ms[i]);
  const double total_ms = std::accumulate(step_ms.begin(), step_ms.end(), 0.0);
  const double tps = total_ms > 0 ? 1000.0 * double(step_ms.size()) / total_ms : 0.0;
  sink.add(metric::kGenTokensPerSecond, tps);
  add_weight_bandwidth(sink, traffic, tps);
  return tps;
}

}  // namespace infertune
