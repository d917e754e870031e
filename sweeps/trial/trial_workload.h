#pragma once
// One workload kind as the trial executor runs it: a run is the workload once from its starting state
// (the cache at its depth, or empty), adding every value it measures as Samples of one repetition and
// returning the value of its main metric, which the stopping rule watches. A workload keeps its own
// random token ids (bench's fixed seed) and whatever state it carries between runs (the cached depth).
//
// Metrics (DESIGN.md, "Metrics"; names in sweeps/store/metric_names.h):
//   pp N @ depth D:   pp_tps, ttft_ms (time to the prompt's logits)                          main: pp_tps
//   tg N @ depth D:   tg_tps, ttft_ms (the first step), itl_ms (steps 2..N, one per gap)     main: tg_tps
//   pp N + tg M:      pp_tps, tg_tps, ttft_ms (prompt + first step), itl_ms, e2e_ms          main: tg_tps
//   batched np:       per request ttft_ms, itl_ms, e2e_ms; aggregate_tps, pp_tps             main: aggregate_tps
//   serve c:          per request ttft_ms, itl_ms, e2e_ms; aggregate_tps, request_rps,
//                     goodput_rps (the server and its clients, HTTP included)                 main: aggregate_tps
// and, where tokens are generated (but served), weight_read_gbs and bandwidth_pct (weight_bandwidth below).
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "engine/context/context.h"
#include "engine/model/model.h"
#include "kernels/result.h"
#include "sweeps/metrics/gpu_sampler.h"
#include "sweeps/spec/sweep_spec.h"
#include "sweeps/store/store_records.h"

namespace infertune {

// Where one run puts its values: every sample of the run gets the same repetition number and warmup flag.
class SampleSink {
 public:
  SampleSink(std::vector<Sample>& out, int64_t repetition, bool is_warmup)
      : out_(&out), repetition_(repetition), is_warmup_(is_warmup) {}
  void add(std::string_view metric, double value) {
    out_->push_back(
        {.metric = std::string(metric), .repetition = repetition_, .value = value, .is_warmup = is_warmup_});
  }
  bool is_warmup() const { return is_warmup_; }

 private:
  std::vector<Sample>* out_;
  int64_t repetition_;
  bool is_warmup_;
};

// What the bandwidth figures need: bytes of weights one decode step reads (model_facts.h) and the host's
// measured read bandwidth, when known.
struct WeightTraffic {
  uint64_t bytes_per_step = 0;
  std::optional<double> host_read_bandwidth_gbs;
};

// weight_read_gbs = bytes_per_step x steps_per_second / 1e9, and bandwidth_pct of the host's bandwidth.
void add_weight_bandwidth(SampleSink& sink, const WeightTraffic& traffic, double steps_per_second);

// gpu_busy_pct, gpu_vram_peak_bytes and gpu_mem_clock_mhz (the clock only when the board reported one) of a
// run's GPU usage (sweeps/metrics/gpu_sampler.h).
void add_gpu_usage(SampleSink& sink, const GpuUsage& usage);

class TrialWorkload {
 public:
  virtual ~TrialWorkload() = default;
  virtual std::string_view main_metric() const = 0;
  virtual Result<double> run(SampleSink& sink) = 0;
};

// The workload's runner on `ctx` (which must outlive it). Errors when the context cannot hold the workload
// (its cells, its sequences, a batch it cannot take), naming the config field to change.
Result<std::unique_ptr<TrialWorkload>> make_trial_workload(const Workload& workload, Context& ctx, const Model& model,
                                                           const WeightTraffic& traffic);

// The kinds (one file each).
std::unique_ptr<TrialWorkload> make_prompt_workload(const Workload& w, Context& ctx);
std::unique_ptr<TrialWorkload> make_generate_workload(const Workload& w, Context& ctx, const WeightTraffic& traffic);
std::unique_ptr<TrialWorkload> make_prompt_generate_workload(const Workload& w, Context& ctx,
                                                             const WeightTraffic& traffic);
std::unique_ptr<TrialWorkload> make_batched_workload(const Workload& w, Context& ctx, const WeightTraffic& traffic);
// Starts the trial's server (an error when it cannot: no tokenizer, no port).
Result<std::unique_ptr<TrialWorkload>> make_serve_workload(const Workload& w, Context& ctx, const Model& model);

}  // namespace infertune
