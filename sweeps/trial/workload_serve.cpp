// serve c C pp N + tg M: the trial's context behind the OpenAI-compatible server of `infertune serve`
// (engine/server), started once per trial on a free loopback port with the context's sequences (-np) as its slots,
// and loadgen's closed loop (bench/loadgen) as its users: C clients, each sending its next request when its reply
// ends, every request a synthetic prompt of about N of the model's tokens (words calibrated with its tokenizer)
// for M streamed tokens (ignore_eos: the end of generation does not stop it). One run is 4 C measured requests,
// the first run after one warm-up request; each run draws prompts of its own, so that no run reuses the previous
// one's cached prefixes.
//
// Per request: ttft_ms (sent -> first streamed token), itl_ms (one per gap between streamed tokens), e2e_ms; per
// run: aggregate_tps (all output tokens / the run's wall time), request_rps, and goodput_rps (the requests within
// the workload's objective, per second). Every figure is what a client of the server sees, HTTP included.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <thread>

#include "bench/loadgen/load_runner.h"
#include "bench/loadgen/load_summary.h"
#include "engine/server/http_server.h"
#include "engine/server/serving_loop.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/vocab.h"
#include "sweeps/store/metric_names.h"
#include "sweeps/trial/trial_workload.h"

namespace infertune {
namespace {

constexpr uint32_t kRequestsPerClient = 4;

class ServeWorkload final : public TrialWorkload {
 public:
  ServeWorkload(const Workload& w, Context& ctx, const Model& model, Tokenizer tokenizer)
      : w_(w), ctx_(&ctx), model_(&model), tokenizer_(std::move(tokenizer)) {}
  ~ServeWorkload() override { stop(); }
  ServeWorkload(const ServeWorkload&) = delete;
  ServeWorkload& operator=(const ServeWorkload&) = delete;

  std::string_view main_metric() const override { return metric::kAggregateTokensPerSecond; }

  Status start() {
    SchedulerParams params;
    params.n_parallel = ctx_->n_seq_max();
    params.stop_at_eos = true;
    params.end_tokens = tokenizer_.vocab().end_of_generation_ids();  // as `infertune serve`
    loop_ = std::make_unique<ServingLoop>(*ctx_, std::move(params),
                                          LoopLimits{.max_waiting = static_cast<uint32_t>(w_.clients) + 4}, metrics_);
    if (Status s = loop_->start(); !s) return s;
    HttpOptions http;
    http.host = "127.0.0.1";
    http.port = 0;  // a free one
    http.alias = "trial";
    http.threads = w_.clients + 4;
    http_ = std::make_unique<HttpServer>(std::move(http), metrics_);
    if (Status s = http_->bind(); !s) return s;
    ServedModel served;
    served.model = model_;
    served.tokenizer = &tokenizer_;
    served.loop = loop_.get();
    served.chat_template_error = "a served sweep workload sends completions only";
    served.limits.n_ctx = ctx_->n_ctx();
    served.limits.n_vocab = ctx_->n_vocab();
    http_->set_ready(std::move(served));
    listener_ = std::thread([this] { http_->serve(); });

    options_.url = fmt::format("http://127.0.0.1:{}", http_->port());
    options_.model = "trial";
    options_.concurrency = {static_cast<uint32_t>(w_.clients)};
    options_.requests = kRequestsPerClient * static_cast<uint32_t>(w_.clients);
    options_.prompt_tokens = {static_cast<uint32_t>(w_.n_prompt), static_cast<uint32_t>(w_.n_prompt)};
    options_.max_tokens = static_cast<uint32_t>(w_.n_gen);
    options_.ignore_eos = true;
    if (w_.slo_ttft_ms > 0) options_.slo_ttft_s = w_.slo_ttft_ms / 1000.0;
    if (w_.slo_itl_ms > 0) options_.slo_itl_s = w_.slo_itl_ms / 1000.0;
    // Calibrated through the trial's server, as loadgen calibrates against any server.
    prompts_.emplace(PromptSource::synthetic(options_, server_tokens_per_word(options_)));
    return {};
  }

  Result<double> run(SampleSink& sink) override {
    options_.warmup = runs_ == 0 ? 1 : 0;
    const LoadLevel level{
        .kind = LoadLevel::Kind::closed, .concurrency = static_cast<uint32_t>(w_.clients), .index = runs_++};
    const LevelRun measured = run_level(options_, level, *prompts_);
    const LevelSummary summary = summarize(measured, options_);
    if (summary.errors > 0) {
      return fail("serve: {} of {} requests to the trial's server failed: {}", summary.errors, summary.requests,
                  summary.first_error);
    }
    for (const RequestOutcome& o : measured.outcomes) {
      if (o.output_tokens != static_cast<uint64_t>(w_.n_gen)) {
        return fail("serve: a request produced {} tokens, expected n_gen {}", o.output_tokens, w_.n_gen);
      }
      sink.add(metric::kTimeToFirstTokenMs, 1000.0 * o.ttft_s);
      for (double gap : o.chunk_gaps_s) sink.add(metric::kInterTokenLatencyMs, 1000.0 * gap);
      sink.add(metric::kEndToEndLatencyMs, 1000.0 * o.e2e_s());
    }
    sink.add(metric::kAggregateTokensPerSecond, summary.output_tokens_per_s);
    sink.add(metric::kRequestsPerSecond, summary.requests_per_s);
    sink.add(metric::kGoodputPerSecond, summary.goodput_rps);
    return summary.output_tokens_per_s;
  }

 private:
  void stop() {
    if (http_) http_->stop();
    if (listener_.joinable()) listener_.join();
    if (loop_) loop_->stop();
  }

  Workload w_;
  Context* ctx_;
  const Model* model_;
  Tokenizer tokenizer_;
  ServerMetrics metrics_;
  std::unique_ptr<ServingLoop> loop_;
  std::unique_ptr<HttpServer> http_;
  std::thread listener_;
  LoadOptions options_;
  std::optional<PromptSource> prompts_;
  uint32_t runs_ = 0;
};

}  // namespace

Result<std::unique_ptr<TrialWorkload>> make_serve_workload(const Workload& w, Context& ctx, const Model& model) {
  auto tokenizer = Tokenizer::from_gguf(model.file());
  if (!tokenizer) return fail("a served workload needs the model's tokenizer: {}", tokenizer.error().message);
  auto workload = std::make_unique<ServeWorkload>(w, ctx, model, std::move(*tokenizer));
  if (Status s = workload->start(); !s) return fail("serve: the trial's server did not start: {}", s.error().message);
  return std::unique_ptr<TrialWorkload>(std::move(workload));
}

}  // namespace infertune
