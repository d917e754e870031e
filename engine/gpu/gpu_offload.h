#pragma once
// The GPU half of a Context (-ngl): the last n_gpu_layers repeating layers of the model (and the output
// layer when n_gpu_layers > n_layers, as llama.cpp counts) run on CUDA devices: all on the main GPU (-mg)
// with -sm none, dealt over the devices with -sm layer in proportion to -ts (layer_split.h). Each device's
// share is a GpuSegment; its weights are uploaded once, in the file's block layout, and may be kept for the
// next context (gpu_weight_cache.h). Per step the residual stream goes up to the first device, moves from
// device to device through host memory, and the logits (or the residual stream, when the output layer
// stays on the CPU) come down.
//
//   auto gpu = GpuOffload::create(model, {.n_gpu_layers = 99, .n_cells = 4096, ...});
//   forward: CPU layers [0, gpu->first_layer()), then gpu->forward(pass, batch, x).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/arch/forward.h"
#include "engine/gpu/gpu_memory.h"
#include "engine/gpu/gpu_segment.h"
#include "engine/gpu/gpu_weight_cache.h"
#include "engine/gpu/layer_split.h"
#include "engine/model/model.h"
#include "kernels/ggml_type.h"
#include "kernels/result.h"

namespace infertune {

struct GpuOffloadParams {
  int n_gpu_layers = 0;                     // -ngl: the last N layers; > n_layers adds the output layer; < 0: all
  int main_gpu = 0;                         // -mg: the device of -sm none (and of a single GPU)
  SplitMode split_mode = SplitMode::layer;  // -sm
  std::vector<double> tensor_split = {};    // -ts: a share per device; empty: in proportion to free memory
  bool kv_offload = true;                   // false (--no-kv-offload): K/V and attention stay on the CPU
  uint32_t n_cells = 0;                     // KV cells (-c)
  GgmlType type_k = GgmlType::F16;
  GgmlType type_v = GgmlType::F16;
  uint32_t max_tokens = 512;  // the largest ubatch (-ub)
  size_t memory_budget = 0;   // bytes the offload may take on each device; 0: what the device has free
  // Where the weights come from: a cache that keeps them for the next context with the same model and
  // shares; null: this offload uploads its own.
  GpuWeightCache* weights = nullptr;
};

// Each CUDA device's free memory, what `held` keeps there counted as free (reused or released before an
// upload, so a split or an -ngl auto fit does not depend on it). Errors: no device, a device not readable.
Result<std::vector<uint64_t>> free_device_memory(const GpuWeightCache* held);

class GpuOffload final : public LayerOffload {
 public:
  // Errors: no device, -mg or -ts not matching the devices, a weight or KV type without GPU kernels, out of
  // device memory (naming what did not fit and how much was free), a failed upload.
  static Result<std::unique_ptr<GpuOffload>> create(const Model& model, const GpuOffloadParams& params);
  // On these shares, whatever split_layers would deal (tests put two shares on one GPU to run the crossing
  // between devices). The shares must be consecutive runs of layers ending at the model's last.
  static Result<std::unique_ptr<GpuOffload>> create_on(const Model& model, const GpuOffloadParams& params,
                                                       std::vector<DeviceLayers> shares);

  uint32_t first_layer() const override { return segments_.front()->split().first_layer; }
  bool runs_output() const override { return segments_.back()->split().output; }
  GpuMemoryUse memory() const;                                // over every device, weights included
  int device() const { return segments_.front()->device(); }  // the first share's
  std::vector<int> devices() const;                           // every share's, in layer order
  size_t n_segments() const { return segments_.size(); }
  const GpuSegment& segment(size_t i) const { return *segments_[i]; }

  Status forward(const ForwardPass& pass, const ForwardBatch& batch, std::span<float> x) override;

 private:
  GpuOffload() = default;
  std::vector<std::unique_ptr<GpuSegment>> segments_;  // in layer order; never empty
};

}  // namespace infertune
