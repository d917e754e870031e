#include "sweeps/trial/trial_executor.h"

#include <fmt/format.h>

#include <chrono>
#include <exception>
#include <memory>
#include <thread>

#include "bench/llama_bench/model_facts.h"
#include "kernels/cuda/nvml.h"
#include "sweeps/metrics/gpu_sampler.h"
#include "sweeps/metrics/peak_rss.h"
#include "sweeps/metrics/perf_counters.h"
#include "sweeps/metrics/thread_cpu.h"
#include "sweeps/store/metric_names.h"
#include "sweeps/trial/repetition_control.h"
#include "sweeps/trial/trial_context_setup.h"
#include "sweeps/trial/trial_workload.h"

namespace infertune {
namespace {

// One run of the workload, with the utilization of that run: the CPU busy share of the threads that worked,
// the hardware counters (absent where the kernel does not permit them) and, when the trial uses a GPU, the
// GPU's busy %, memory in use and memory clock (absent without NVML).
class MeteredRun {
 public:
  // gpu_device: the CUDA device the trial offloads to, none for a CPU-only trial.
  explicit MeteredRun(std::optional<int> gpu_device) : counters_(PerfCounters::open_for_process()) {
    if (gpu_device) gpu_ = std::make_unique<GpuSampler>(GpuSampler::device_readings(*gpu_device));
  }

  Result<double> operator()(TrialWorkload& workload, SampleSink& sink) {
    cpu_.start();
    counters_.start();
    if (gpu_) gpu_->start();
    auto value = workload.run(sink);
    // Stopped first: its thread must be gone before the CPU meter reads the process's threads.
    const std::optional<GpuUsage> gpu = gpu_ ? gpu_->stop() : std::nullopt;
    const CounterValues counted = counters_.stop();
    const ThreadCpuUsage usage = cpu_.stop();
    if (!value) return value;
    if (usage.mean_busy_share) sink.add(metric::kCpuBusyShare, *usage.mean_busy_share);
    if (counted.instructions) sink.add(metric::kInstructions, double(*counted.instructions));
    if (counted.cycles) sink.add(metric::kCycles, double(*counted.cycles));
    if (counted.llc_misses) sink.add(metric::kLlcMisses, double(*counted.llc_misses));
    if (auto ipc = counted.ipc()) sink.add(metric::kInstructionsPerCycle, *ipc);
    if (gpu) add_gpu_usage(sink, *gpu);
    return value;
  }

 private:
  ThreadCpuMeter cpu_;
  PerfCounters counters_;
  std::unique_ptr<GpuSampler> gpu_;
};

// The GPU the trial's context offloads layers to (none for a CPU-only trial, -ngl auto included when it
// resolved to no layer): its utilization is sampled, or the log says why it cannot be.
std::optional<int> gpu_device_of(const Context& ctx, std::vector<std::string>& warnings) {
  if (ctx.gpu() == nullptr) return std::nullopt;
  if (!nvml::nvml_available()) {
    warnings.push_back("GPU utilization not recorded: " + nvml::nvml_unavailable_reason());
    return std::nullopt;
  }
  return ctx.gpu()->device();
}

Result<TrialMeasurement> measure(const Model& model, const nlohmann::json& config, const TrialSettings& settings,
                                 const TrialEnvironment& environment, const std::atomic<bool>* stop,
                                 GpuWeightCache* gpu_weights) {
  auto parsed = parse_trial_config(config);
  if (!parsed) return parsed.error();
  if (settings.cooldown_s > 0) trial_cool_down(settings.cooldown_s, stop);
  // Before the context exists, so that the peak includes its KV cache and buffers but not an earlier
  // trial's. Where the kernel does not permit the reset, the peak counts from the process start.
  const Status peak_reset = reset_peak_rss();
  auto setup = start_trial_context(model, *parsed, gpu_weights);
  if (!setup) return setup.error();
  Context& ctx = *setup->context;
  const WeightTraffic traffic{.bytes_per_step = model_facts(model).weight_bytes_per_token,
                              .host_read_bandwidth_gbs = environment.host_read_bandwidth_gbs};
  auto workload = make_trial_workload(parsed->workload, ctx, model, traffic);
  if (!workload) return workload.error();

  TrialMeasurement m;
  m.main_metric = std::string((*workload)->main_metric());
  m.warnings = setup->warnings;
  if (!peak_reset) m.warnings.push_back("peak RSS not reset: " + peak_reset.error().message);
  // Opened after the pool started, so that its threads are counted.
  MeteredRun metered(gpu_device_of(ctx, m.warnings));
  bool kv_recorded = false;
  const auto run_once = [&](SampleSink& sink) {
    auto value = metered(**workload, sink);
    // Allocated once for the context's cells: one value per trial, in its first timed repetition.
    if (value && !sink.is_warmup() && !kv_recorded) {
      sink.add(metric::kKvBytes, double(ctx.kv_bytes()));
      kv_recorded = true;
    }
    return value;
  };
  if (Status s = run_repetitions(run_once, settings, stop, m); !s) return s.error();
  m.peak_rss_bytes = peak_rss_bytes();
  return m;
}

}  // namespace

RepetitionRule repetition_rule(const TrialSettings& settings) {
  return {.min_reps = settings.min_reps, .max_reps = settings.max_reps, .ci_target = settings.ci_target};
}

Status run_repetitions(const TrialRun& run_once, const TrialSettings& settings, const std::atomic<bool>* stop,
                       TrialMeasurement& m) {
  int64_t repetition = 0;
  if (settings.warmup && !trial_stop_requested(stop)) {
    SampleSink sink(m.samples, repetition++, true);
    if (auto v = run_once(sink); !v) return fail("warmup: {}", v.error().message);
  }
  const RepetitionRule rule = repetition_rule(settings);
  std::vector<double> main_values;
  while (!trial_stop_requested(stop)) {
    SampleSink sink(m.samples, repetition++, false);
    auto value = run_once(sink);
    if (!value) return fail("repetition {}: {}", main_values.size() + 1, value.error().message);
    main_values.push_back(*value);
    m.repetitions = static_cast<int>(main_values.size());
    const RepetitionDecision decision = next_repetition(main_values, rule);
    if (decision == RepetitionDecision::Continue) continue;
    m.ci_target_met = decision == RepetitionDecision::CiTargetMet;
    break;
  }
  return {};
}

bool trial_stop_requested(const std::atomic<bool>* stop) { return stop && stop->load(std::memory_order_relaxed); }

void trial_cool_down(double seconds, const std::atomic<bool>* stop) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!trial_stop_requested(stop) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Result<TrialMeasurement> run_trial(const Model& model, const nlohmann::json& config, const TrialSettings& settings,
                                   const TrialEnvironment& environment, const std::atomic<bool>* stop,
                                   GpuWeightCache* gpu_weights) {
  try {
    return measure(model, config, settings, environment, stop, gpu_weights);
  } catch (const std::exception& e) {  // e.g. std::bad_alloc: the trial fails, the worker goes on
    return fail("trial: {}", e.what());
  }
}

}  // namespace infertune
