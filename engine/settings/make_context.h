#pragma once
// The one way a command turns its settings into a running Context: a thread pool placed per the placement
// settings (engine/threading/placed_pool.h) and a Context on it with the context settings. `run`, `bench`,
// `batched-bench` and the sweep's trials all start theirs here, so they cannot disagree: -t threads run
// one-token steps, -tb threads (or -t's, when -tb is not set) run batches, as in llama.cpp.
#include <memory>
#include <string>
#include <vector>

#include "engine/context/context.h"
#include "engine/model/model.h"
#include "engine/settings/engine_settings.h"
#include "engine/threading/placed_pool.h"
#include "kernels/result.h"

namespace infertune {

struct PlacedContext {
  std::unique_ptr<PlacedPool> placed;  // outlives the context, which runs on its pool
  std::unique_ptr<Context> context;
  std::vector<std::string> warnings;  // what the placement ignored or could not do, for the caller's log
};

// Errors name the setting: an unusable placement, a context the engine cannot create (KV type, sizes, memory,
// GPU memory). -ngl without a visible GPU is a warning and the CPU path.
Result<PlacedContext> make_context(const Model& model, const EngineSettings& settings);

}  // namespace infertune
