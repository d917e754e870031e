// batched np P, each pp N + tg M: P requests of N random prompt ids and M greedy tokens each (the end of
// generation does not stop them), submitted at once to the continuous-batching Scheduler with P slots. The
// scheduler's token callback timestamps every token, so per request: ttft_ms (submission -> first token),
// itl_ms (one per gap between its tokens) and e2e_ms (submission -> last token); per run: aggregate_tps
// (all generated tokens / wall time), pp_tps (all prompt tokens / the time until every request had its
// first token: the prefill, with whatever decode steps the scheduler mixed in) and the weight bandwidth
// (one read of the weights per scheduler step).
#include <algorithm>
#include <vector>

#include "engine/scheduler/scheduler.h"
#include "sweeps/store/metric_names.h"
#include "sweeps/trial/single_sequence.h"

namespace infertune {
namespace {

SamplingParams greedy() {
  SamplingParams p;
  p.temperature = 0;
  p.top_k = 0;
  p.top_p = 1;
  p.min_p = 0;
  p.seed = 1;
  return p;
}

class BatchedWorkload final : public TrialWorkload {
 public:
  BatchedWorkload(const Workload& w, Context& ctx, const WeightTraffic& traffic)
      : w_(w), ctx_(&ctx), traffic_(traffic), tokens_(ctx.n_vocab()) {}

  std::string_view main_metric() const override { return metric::kAggregateTokensPerSecond; }

  Result<double> run(SampleSink& sink) override {
    const auto np = static_cast<size_t>(w_.n_parallel);
    std::vector<std::vector<TrialClock::time_point>> token_times(np);
    SchedulerParams params;
    params.n_parallel = static_cast<uint32_t>(np);
    params.stop_at_eos = false;
    params.on_token = [&token_times](RequestId id, int32_t) {
      if (id < token_times.size()) token_times[id].push_back(TrialClock::now());
    };
    auto scheduler = Scheduler::create(*ctx_, params);
    if (!scheduler) return scheduler.error();
    std::vector<std::vector<int32_t>> prompts(np);
    for (auto& p : prompts) tokens_.fill(p, static_cast<size_t>(w_.n_prompt));

    const auto start = TrialClock::now();
    for (auto& p : prompts) {
      auto id = scheduler->submit({.prompt = std::move(p), .max_new_tokens = uint32_t(w_.n_gen), .sampling = greedy()});
      if (!id) return id.error();
    }
    if (auto done = scheduler->run(); !done) return done.error();
    const double wall_ms = ms_between(start, TrialClock::now());
    return add_samples(sink, token_times, start, wall_ms, scheduler->stats().steps);
  }

 private:
  Result<double> add_samples(SampleSink& sink, const std::vector<std::vector<TrialClock::time_point>>& token_times,
                             TrialClock::time_point start, double wall_ms, uint64_t steps) const {
    double prefill_ms = 0;
    size_t generated = 0;
    for (size_t r = 0; r < token_times.size(); ++r) {
      const auto& times = token_times[r];
      if (times.size() != size_t(w_.n_gen)) {
        return fail("batched: request {} produced {} tokens, expected n_gen {}", r, times.size(), w_.n_gen);
      }
      const double first_ms = ms_between(start, times.front());
      prefill_ms = std::max(prefill_ms, first_ms);
      sink.add(metric::kTimeToFirstTokenMs, first_ms);
      for (size_t i = 1; i < times.size(); ++i)
        sink.add(metric::kInterTokenLatencyMs, ms_between(times[i - 1], times[i]));
      sink.add(metric::kEndToEndLatencyMs, ms_between(start, times.back()));
      generated += times.size();
    }
    const double aggregate = wall_ms > 0 ? 1000.0 * double(generated) / wall_ms : 0.0;
    sink.add(metric::kAggregateTokensPerSecond, aggregate);
    const double prompt_tokens = double(token_times.size()) * w_.n_prompt;
    sink.add(metric::kPromptTokensPerSecond, prefill_ms > 0 ? 1000.0 * prompt_tokens / prefill_ms : 0.0);
    add_weight_bandwidth(sink, traffic_, wall_ms > 0 ? 1000.0 * double(steps) / wall_ms : 0.0);
    return aggregate;
  }

  Workload w_;
  Context* ctx_;
  WeightTraffic traffic_;
  RandomTokens tokens_;
};

}  // namespace

std::unique_ptr<TrialWorkload> make_batched_workload(const Workload& w, Context& ctx, const WeightTraffic& traffic) {
  return std::make_unique<BatchedWorkload>(w, ctx, traffic);
}

}  // namespace infertune
