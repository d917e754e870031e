#include "sweeps/trial/served_load.h"

#include "bench/loadgen/load_runner.h"
#include "bench/loadgen/load_summary.h"
#include "sweeps/store/metric_names.h"

namespace infertune {
namespace {

constexpr uint32_t kRequestsPerClient = 4;

}  // namespace

ServedLoad::ServedLoad(const Workload& w, const std::string& url, const std::string& model) : w_(w) {
  options_.url = url;
  options_.model = model;
  options_.concurrency = {static_cast<uint32_t>(w.clients)};
  options_.requests = kRequestsPerClient * static_cast<uint32_t>(w.clients);
  options_.prompt_tokens = {static_cast<uint32_t>(w.n_prompt), static_cast<uint32_t>(w.n_prompt)};
  options_.max_tokens = static_cast<uint32_t>(w.n_gen);
  options_.ignore_eos = true;
  if (w.slo_ttft_ms > 0) options_.slo_ttft_s = w.slo_ttft_ms / 1000.0;
  if (w.slo_itl_ms > 0) options_.slo_itl_s = w.slo_itl_ms / 1000.0;
  // Calibrated through the server, as loadgen calibrates against any server.
  prompts_.emplace(PromptSource::synthetic(options_, server_tokens_per_word(options_)));
}

Result<double> ServedLoad::run(SampleSink& sink) {
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

}  // namespace infertune
