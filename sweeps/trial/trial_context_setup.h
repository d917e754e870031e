#pragma once
// From a trial's configuration to what it runs on: the thread pool placed per its threads / threads_batch /
// numa / cpu_mask (start_placed_pool, as `run` and `bench` do) and a Context with its n_ctx, n_batch,
// n_ubatch, n_parallel sequences, KV types and attention kernel. Errors name the config field or step.
#include <memory>
#include <string>
#include <vector>

#include "engine/context/context.h"
#include "engine/model/model.h"
#include "engine/threading/placed_pool.h"
#include "kernels/result.h"
#include "sweeps/trial/trial_config.h"

namespace infertune {

// The pool outlives the context (members are destroyed in reverse order).
struct TrialContext {
  std::unique_ptr<PlacedPool> placed;
  std::unique_ptr<Context> context;
  std::vector<std::string> warnings;  // what the placement ignored or could not bind
};

// The Context's settings on `pool`, whose plan is `plan`: -t for one-token steps, -tb for bigger ones.
ContextParams trial_context_params(const TrialConfig& config, const PlacementPlan& plan, ThreadPool* pool);

// Errors: -ngl > 0 (no GPU backend in the forward pass), a placement the machine cannot give, a context the
// engine refuses (its message, prefixed with the config fields that set it).
Result<TrialContext> start_trial_context(const Model& model, const TrialConfig& config);

}  // namespace infertune
