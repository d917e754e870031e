// serve c C pp N + tg M: the trial's context behind the OpenAI-compatible server of `infertune serve`
// (engine/server), started once per trial on a free loopback port with the context's sequences (-np) as its slots,
// and the workload's users (sweeps/trial/served_load.h: loadgen's closed loop, and what each run measures).
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <thread>

#include "engine/server/http_server.h"
#include "engine/server/serving_loop.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/vocab.h"
#include "sweeps/store/metric_names.h"
#include "sweeps/trial/served_load.h"
#include "sweeps/trial/trial_workload.h"

namespace infertune {
namespace {

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

    load_.emplace(w_, fmt::format("http://127.0.0.1:{}", http_->port()), "trial");
    return {};
  }

  Result<double> run(SampleSink& sink) override { return load_->run(sink); }

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
  std::optional<ServedLoad> load_;
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
