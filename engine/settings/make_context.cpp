#include "engine/settings/make_context.h"

#include "kernels/cuda/cuda_devices.h"

namespace infertune {

Result<PlacedContext> make_context(const Model& model, const EngineSettings& settings) {
  PlacedContext out;
  auto placed = start_placed_pool(settings.placement);
  if (!placed) return placed.error();
  out.placed = std::move(*placed);
  out.warnings = out.placed->warnings();
  ContextParams params = settings.context;
  params.n_threads = out.placed->plan.n_threads;
  params.n_threads_batch = out.placed->plan.n_threads_batch;
  params.pool = out.placed->pool.get();
  params.n_gpu_layers = settings.n_gpu_layers;
  params.main_gpu = settings.main_gpu;
  params.kv_offload = settings.kv_offload;
  if (params.n_gpu_layers != 0 && cuda_devices().empty()) {
    // As llama.cpp: without a driver or GPU the layers run on the CPU, and the user is told once.
    out.warnings.push_back(fmt::format("-ngl {}: {}; running every layer on the CPU", params.n_gpu_layers,
                                       cuda_compiled() ? "no CUDA GPU is visible" : "this build has no CUDA backend"));
    params.n_gpu_layers = 0;
  }
  auto context = Context::create(model, params);
  if (!context) return context.error();
  out.context = std::make_unique<Context>(std::move(*context));
  return out;
}

}  // namespace infertune
