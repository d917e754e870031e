#include "engine/settings/make_context.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <string>

#include "engine/gpu/gpu_memory.h"
#include "engine/gpu/layer_split.h"
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

// -ngl auto: the most layers whose predicted device memory (engine/gpu/gpu_memory.h) fits what each GPU
// they are dealt to (layer_split.h) has free, less a reserve.
Result<FittedLayers> fit_gpu_layers_to_devices(const Model& model, const ContextParams& p) {
  auto free = free_device_memory(p.gpu_weights);
  if (!free) return fail("-ngl auto: {}", free.error().message);
  const ModelConfig& c = model.config();
  const GpuMemoryInputs in{
      .n_gpu_layers = 0,
      .kv_offload = p.kv_offload,
      .n_cells = p.n_ctx != 0 ? p.n_ctx : kDefaultContext,
      .type_k = p.type_k,
      .type_v = p.type_v,
      .max_tokens = std::min(p.n_ubatch != 0 ? p.n_ubatch : 512u, p.n_batch != 0 ? p.n_batch : 2048u)};
  const LayerSplitOptions options{.mode = p.split_mode, .main_gpu = p.main_gpu, .proportions = p.tensor_split};
  const OffloadWeightBytes weights = offload_weight_bytes(model.file(), c);
  FittedLayers out;
  out.n_gpu_layers = fit_split_layers(c, weights, in, options, *free);
  auto shares = split_layers(out.n_gpu_layers, c.n_layers, options, *free);
  std::vector<int> devices;
  uint64_t predicted = 0, free_there = 0;
  for (const DeviceLayers& share : shares ? *shares : std::vector<DeviceLayers>{}) {
    devices.push_back(share.device);
    predicted += predict_split_memory(c, weights, in, share.split).total();
    free_there += (*free)[static_cast<size_t>(share.device)];
  }
  if (devices.empty()) {
    devices.push_back(p.main_gpu);
    free_there = p.main_gpu >= 0 && static_cast<size_t>(p.main_gpu) < free->size() ? (*free)[p.main_gpu] : 0;
  }
  out.note = fmt::format("-ngl auto: {} of {} layers{} fit GPU{} {} ({:.0f} MiB predicted, {:.0f} MiB free)",
                         std::min<uint32_t>(out.n_gpu_layers, c.n_layers), c.n_layers,
                         out.n_gpu_layers > static_cast<int>(c.n_layers) ? " and the output layer" : "",
                         devices.size() == 1 ? "" : "s", fmt::join(devices, ", "), predicted / kMiB, free_there / kMiB);
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
  params.split_mode = settings.split_mode;
  params.tensor_split = settings.tensor_split;
  params.kv_offload = settings.kv_offload;
  if (const std::string why = params.n_gpu_layers != 0 ? no_cuda_gpu_reason() : ""; !why.empty()) {
    // As llama.cpp: without a driver or GPU the layers run on the CPU, and the user is told once.
    out.warnings.push_back(fmt::format("-ngl {}: {}; running every layer on the CPU", setting_text(settings), why));
    params.n_gpu_layers = 0;
  }
  if (params.n_gpu_layers != 0 && model.config().is_moe()) {
    out.warnings.push_back(
        fmt::format("-ngl {}: {}; running every layer on the CPU", setting_text(settings), kGpuRunsNoExperts));
    params.n_gpu_layers = 0;
  }
  if (params.n_gpu_layers == kGpuLayersAuto) {
    auto fitted = fit_gpu_layers_to_devices(model, params);
    if (!fitted) return fitted.error();
    out.warnings.push_back(fitted->note);
    params.n_gpu_layers = fitted->n_gpu_layers;
  }
  auto context = Context::create(model, params);
  if (!context) return context.error();
  out.context = std::make_unique<Context>(std::move(*context));
  if (const uint32_t trained = model.config().n_ctx_train; trained != 0 && out.context->n_ctx() > trained) {
    out.warnings.push_back(
        fmt::format("the context of {} tokens is longer than the {} the model was trained on; "
                    "past {} tokens its output may degrade",
                    out.context->n_ctx(), trained, trained));
  }
  return out;
}

}  // namespace infertune
