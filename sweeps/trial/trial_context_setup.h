#pragma once
// From a trial's configuration to what it runs on: make_context (engine/settings/make_context.h) with the
// trial's settings, the one way `run`, `bench` and the sweep start a placed thread pool and a Context. The
// engine's errors name flags ("-ngl 99: ...", "-C/--cpu-mask '0xF0' ..."); here they also name the config
// fields of those flags, the trial's own vocabulary.
#include "engine/gpu/gpu_weight_cache.h"
#include "engine/model/model.h"
#include "engine/settings/make_context.h"
#include "kernels/result.h"
#include "sweeps/trial/trial_config.h"

namespace infertune {

// `gpu_weights` (optional): where the offloaded layers' weights come from and stay for the next trial.
// Errors: -ngl > 0 without a usable GPU (a trial never measures the CPU under a GPU label), a placement the
// machine cannot give, a context the engine refuses.
Result<PlacedContext> start_trial_context(const Model& model, const TrialConfig& config,
                                          GpuWeightCache* gpu_weights = nullptr);

}  // namespace infertune
