#include "engine/settings/make_context.h"

#include <algorithm>
#include <string>

#include "engine/gpu/gpu_memory.h"
#include "kernels/cuda/cuda_devices.h"
#include "kernels/cuda/device_runtime.h"

namespace infertune {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string setting_text(const EngineSettings& s) {
  return s.n_gpu_layers == kGpuLayersAuto ? std::string("auto") : std::to_string(s.n_gpu_layers);
}

struct FittedLayers {
  int n_gpu_layers = 0;
  std::string note;
};

// -ngl auto: the most layers whose predicted device memory (engine/gpu/gpu_memory.h) fits what the GPU has
// free, less a reserve.
Result<FittedLayers> fit_gpu_layers_to_device(const Model& model, const ContextParams& p) {
  if (int code = cuda::set_device(p.main_gpu); code != 0) {
    return fail("-ngl auto: GPU {}: {}", p.main_gpu, cuda::error_text(code));
  }
  size_t free_bytes = 0, total_bytes = 0;
  if (int code = cuda::memory_info(&free_bytes, &total_bytes); code != 0) {
    return fail("-ngl auto: cannot read GPU {}'s free memory: {}", p.main_gpu, cuda::error_text(code));
  }
  const ModelConfig& c = model.config();
  const GpuMemoryInputs in{
      .n_gpu_layers = 0,
      .kv_offload = p.kv_offload,
      .n_cells = p.n_ctx != 0 ? p.n_ctx : kDefaultContext,
      .type_k = p.type_k,
      .type_v = p.type_v,
      .max_tokens = std::min(p.n_ubatch != 0 ? p.n_ubatch : 512u, p.n_batch != 0 ? p.n_batch : 2048u)};
  // Weights a cache holds on the device are reused or released before an upload: free for this purpose.
  if (p.gpu_weights != nullptr) free_bytes += p.gpu_weights->held_bytes(p.main_gpu);
  const uint64_t budget = free_bytes > kDeviceReserveBytes ? free_bytes - kDeviceReserveBytes : 0;
  const OffloadWeightBytes weights = offload_weight_bytes(model.file(), c);
  FittedLayers out;
  out.n_gpu_layers = fit_gpu_layers(c, weights, in, budget);
  GpuMemoryInputs used = in;
  used.n_gpu_layers = out.n_gpu_layers;
  out.note = fmt::format("-ngl auto: {} of {} layers{} fit GPU {} ({:.0f} MiB predicted, {:.0f} MiB free)",
                         std::min<uint32_t>(out.n_gpu_layers, c.n_layers), c.n_layers,
                         out.n_gpu_layers > static_cast<int>(c.n_layers) ? " and the output layer" : "", p.main_gpu,
                         predict_gpu_memory(c, weights, used).total() / kMiB, free_bytes / kMiB);
  return out;
}

}  // namespace

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
  if (const std::string why = params.n_gpu_layers != 0 ? no_cuda_gpu_reason() : ""; !why.empty()) {
    // As llama.cpp: without a driver or GPU the layers run on the CPU, and the user is told once.
    out.warnings.push_back(fmt::format("-ngl {}: {}; running every layer on the CPU", setting_text(settings), why));
    params.n_gpu_layers = 0;
  }
  if (params.n_gpu_layers == kGpuLayersAuto) {
    auto fitted = fit_gpu_layers_to_device(model, params);
    if (!fitted) return fitted.error();
    out.warnings.push_back(fitted->note);
    params.n_gpu_layers = fitted->n_gpu_layers;
  }
  auto context = Context::create(model, params);
  if (!context) return context.error();
  out.context = std::make_unique<Context>(std::move(*context));
  if (const uint32_t trained = model.config().n_ctx_train; trained != 0 && out.context->n_ctx() > trained) {
    out.warnings.push_back(fmt::format("the context of {} tokens is longer than the {} the model was trained on; "
                                       "past {} tokens its output may degrade",
                                       out.context->n_ctx(), trained, trained));
  }
  return out;
}

}  // namespace infertune
