#include "engine/settings/make_context.h"

namespace infertune {

Result<PlacedContext> make_context(const Model& model, const EngineSettings& settings) {
  if (settings.n_gpu_layers > 0) {
    return fail("-ngl {}: this build has no GPU backend for the forward pass (the engine runs on the CPU; use -ngl 0)",
                settings.n_gpu_layers);
  }
  PlacedContext out;
  auto placed = start_placed_pool(settings.placement);
  if (!placed) return placed.error();
  out.placed = std::move(*placed);
  out.warnings = out.placed->warnings();
  ContextParams params = settings.context;
  params.n_threads = out.placed->plan.n_threads;
  params.n_threads_batch = out.placed->plan.n_threads_batch;
  params.pool = out.placed->pool.get();
  auto context = Context::create(model, params);
  if (!context) return context.error();
  out.context = std::make_unique<Context>(std::move(*context));
  return out;
}

}  // namespace infertune
