#pragma once
// Runs one planned trial inside the process that holds its model (the sweep worker): builds the context and
// the placed thread pool from the trial's configuration (PlannedTrial::config, sweeps/plan/trial_plan.h),
// warms up, then measures repetitions of its workload until the 95% confidence interval of the workload's
// main metric is within settings.ci_target of its mean or settings.max_reps is reached. Every raw value is
// kept as a Sample (metric_names.h), warmups flagged; nothing is averaged here (the store summarizes).
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/gpu/gpu_weight_cache.h"
#include "engine/model/model.h"
#include "kernels/result.h"
#include "sweeps/store/store_records.h"
#include "sweeps/trial/repetition_control.h"

namespace infertune {

struct TrialSettings {
  bool warmup = true;       // one untimed run of the workload first (samples kept, flagged is_warmup)
  int min_reps = 3;         // --min-reps: never fewer timed repetitions
  int max_reps = 10;        // --max-reps
  double ci_target = 0.03;  // --ci-target: stop when ci95 half-width / mean of the main metric <= this
  double cooldown_s = 0;    // --cooldown: idle time before each trial

  nlohmann::json to_json() const;
  static Result<TrialSettings> from_json(const nlohmann::json& j);
};

// What the worker knows about the host and the model beyond the config.
struct TrialEnvironment {
  std::optional<double> host_read_bandwidth_gbs;  // the probe's all-core read bandwidth, for bandwidth %
};

struct TrialMeasurement {
  std::vector<Sample> samples;            // every metric of every repetition, in measured order
  std::optional<int64_t> peak_rss_bytes;  // the process's peak RSS during the trial (reset before it)
  int repetitions = 0;                    // timed repetitions run
  bool ci_target_met = false;             // false: stopped at max_reps
  std::string main_metric;                // the metric the stopping rule watched ("tg_tps", "pp_tps", ...)
  std::vector<std::string> warnings;      // what the thread placement ignored or could not bind, for the log
};

// True once `stop` (optional) is set.
bool trial_stop_requested(const std::atomic<bool>* stop);
// --cooldown: idle before a trial, in short naps so that a stop request is seen within 0.1 s.
void trial_cool_down(double seconds, const std::atomic<bool>* stop);

// The sweep's stopping rule of a trial's repetitions (repetition_control.h).
RepetitionRule repetition_rule(const TrialSettings& settings);

// One run of a trial's workload: adds its samples to the sink, returns the value of the main metric.
class SampleSink;
using TrialRun = std::function<Result<double>(SampleSink& sink)>;

// A warmup run (when settings.warmup) and then timed runs until the stopping rule is met or `stop` is set: every
// run's samples, the repetitions and whether the CI target was met go into `m`. A failed run ends it with an error
// naming the run ("warmup: ...", "repetition 2: ..."). Both this engine's trials and llama-server's use it.
Status run_repetitions(const TrialRun& run_once, const TrialSettings& settings, const std::atomic<bool>* stop,
                       TrialMeasurement& m);

// `stop`, when set, is polled between repetitions: the trial then ends early with what it measured.
// Errors (a context that cannot be created, a failed decode, a config field missing or out of range) name
// the field or the step; they never abort.
// `gpu_weights` (optional) keeps the offloaded layers' weights from one trial to the next (gpu_weight_cache.h).
Result<TrialMeasurement> run_trial(const Model& model, const nlohmann::json& config, const TrialSettings& settings,
                                   const TrialEnvironment& environment, const std::atomic<bool>* stop = nullptr,
                                   GpuWeightCache* gpu_weights = nullptr);

}  // namespace infertune
