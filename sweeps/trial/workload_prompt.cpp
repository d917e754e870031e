// pp N at depth D: the prompt's N random ids decoded in -b pieces after D cached tokens; pp_tps = N / that
// time, ttft_ms = the same time (the prompt's logits are what the first token is sampled from).
#include "sweeps/store/metric_names.h"
#include "sweeps/trial/single_sequence.h"

namespace infertune {
namespace {

class PromptWorkload final : public TrialWorkload {
 public:
  PromptWorkload(const Workload& w, Context& ctx)
      : w_(w), ctx_(&ctx), tokens_(ctx.n_vocab()), depth_(w.depth, int(ctx.n_batch())) {}

  std::string_view main_metric() const override { return metric::kPromptTokensPerSecond; }

  Result<double> run(SampleSink& sink) override {
    if (Status s = depth_.reset(*ctx_, tokens_); !s) return s.error();
    const auto start = TrialClock::now();
    if (Status s = eval_prompt(*ctx_, w_.n_prompt, int(ctx_->n_batch()), tokens_); !s) {
      return fail("prompt: {}", s.error().message);
    }
    const double ms = ms_between(start, TrialClock::now());
    const double tps = ms > 0 ? 1000.0 * w_.n_prompt / ms : 0.0;
    sink.add(metric::kPromptTokensPerSecond, tps);
    sink.add(metric::kTimeToFirstTokenMs, ms);
    return tps;
  }

 private:
  Workload w_;
  Context* ctx_;
  RandomTokens tokens_;
  DepthStart depth_;
};

}  // namespace

std::unique_ptr<TrialWorkload> make_prompt_workload(const Workload& w, Context& ctx) {
  return std::make_unique<PromptWorkload>(w, ctx);
}

}  // namespace infertune
