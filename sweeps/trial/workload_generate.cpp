// tg N at depth D: N one-token steps after D cached tokens, each timed: ttft_ms is the first step, itl_ms
// every later one (N - 1 gaps), tg_tps = N / their sum, plus the weight bandwidth of those steps.
#include "sweeps/store/metric_names.h"
#include "sweeps/trial/single_sequence.h"

namespace infertune {
namespace {

class GenerateWorkload final : public TrialWorkload {
 public:
  GenerateWorkload(const Workload& w, Context& ctx, const WeightTraffic& traffic)
      : w_(w), ctx_(&ctx), traffic_(traffic), tokens_(ctx.n_vocab()), depth_(w.depth, int(ctx.n_batch())) {}

  std::string_view main_metric() const override { return metric::kGenTokensPerSecond; }

  Result<double> run(SampleSink& sink) override {
    if (Status s = depth_.reset(*ctx_, tokens_); !s) return s.error();
    step_ms_.clear();
    if (Status s = timed_gen_steps(*ctx_, w_.n_gen, tokens_, step_ms_); !s) return s.error();
    return add_generation_samples(sink, step_ms_, 0.0, traffic_);
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

std::unique_ptr<TrialWorkload> make_generate_workload(const Workload& w, Context& ctx, const WeightTraffic& traffic) {
  return std::make_unique<GenerateWorkload>(w, ctx, traffic);
}

}  // namespace infertune
