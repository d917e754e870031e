#pragma once
// The users of a served workload (serve c C pp N + tg M) and what one run of them measures, against any
// OpenAI-compatible server at a URL: the trial's own `infertune serve` (workload_serve.cpp) or llama.cpp's
// llama-server (sweeps/run/llama_cpp_trial.cpp), so that both engines' served figures mean the same thing.
//
// The users are loadgen's closed loop (bench/loadgen): C clients, each sending its next request when its reply
// ends, every request a synthetic prompt of about N of the model's tokens (words calibrated with the server's
// /tokenize) for M streamed tokens (ignore_eos: the end of generation does not stop it). One run is 4 C measured
// requests, the first run after one warm-up request; each run draws prompts of its own, so that no run reuses the
// previous one's cached prefixes.
//
// Per request: ttft_ms (sent -> first streamed token), itl_ms (one per gap between streamed tokens), e2e_ms; per
// run: aggregate_tps (all output tokens / the run's wall time), request_rps, and goodput_rps (the requests within
// the workload's objective, per second). Every figure is what a client of the server sees, HTTP included.
#include <cstdint>
#include <optional>
#include <string>

#include "bench/loadgen/load_options.h"
#include "bench/loadgen/prompt_source.h"
#include "kernels/result.h"
#include "sweeps/spec/sweep_spec.h"
#include "sweeps/trial/trial_workload.h"

namespace infertune {

class ServedLoad {
 public:
  // `model`: the name requests carry (the server's alias). Calibrates the prompts against the server, which must
  // be answering.
  ServedLoad(const Workload& w, const std::string& url, const std::string& model);

  // One run of the clients. An error when a request failed or produced other than n_gen tokens.
  Result<double> run(SampleSink& sink);

 private:
  Workload w_;
  LoadOptions options_;
  std::optional<PromptSource> prompts_;
  uint32_t runs_ = 0;
};

}  // namespace infertune
