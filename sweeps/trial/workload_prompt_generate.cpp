// pp N + tg M at depth D: the prompt (in -b pieces), then M one-token steps, as one request. ttft_ms is the
// prompt plus the first step (the first generated token's own step), itl_ms every later step, e2e_ms the
// whole; pp_tps over the prompt's time, tg_tps over the steps' time (the main metric).
#include "sweeps/store/metric_names.h"
#include "sweeps/trial/single_sequence.h"

namespace infertune {
namespace {

class PromptGenerateWorkload final : public TrialWorkload {
 public:
  PromptGenerateWorkload(const Workload& w, Context& ctx, const WeightTraffic& traffic)
      : w_(w), ctx_(&ctx), traffic_(traffic), tokens_(ctx.n_vocab()), depth_(w.depth, int(ctx.n_batch())) {}

  std::string_view main_metric() const override { return metric::kGenTokensPerSecond; }

  Result<double> run(SampleSink& sink) override {
    if (Status s = depth_.reset(*ctx_, tokens_); !s) return s.error();
    const auto start = TrialClock::now();
    if (Status s = eval_prompt(*ctx_, w_.n_prompt, int(ctx_->n_batch()), tokens_); !s) {
      return fail("prompt: {}", s.error().message);
    }
    const double prompt_ms = ms_between(start, TrialClock::now());
    step_ms_.clear();
    if (Status s = timed_gen_steps(*ctx_, w_.n_gen, tokens_, step_ms_); !s) return s.error();
    const double e2e_ms = ms_between(start, TrialClock::now());
    sink.add(metric::kPromptTokensPerSecond, prompt_ms > 0 ? 1000.0 * w_.n_prompt / prompt_ms : 0.0);
    sink.add(metric::kEndToEndLatencyMs, e2e_ms);
    return add_generation_samples(sink, step_ms_, prompt_ms, traffic_);
  }

 private:
  Workload w_;
  Context* ctx_;
  WeightTraffic traffic_;
  RandomTokens tokens_;
  DepthStart depth_;
  std::vector<double> step_ms_;
};

}  // namespace

std::unique_ptr<TrialWorkload> make_prompt_generate_workload(const Workload& w, Context& ctx,
                                                             const WeightTraffic& traffic) {
  return std::make_unique<PromptGenerateWorkload>(w, ctx, traffic);
}

}  // namespace infertune
