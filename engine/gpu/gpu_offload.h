#pragma once
// The GPU half of a Context (-ngl): the last n_gpu_layers repeating layers of the model (and the output
// layer when n_gpu_layers > n_layers, as llama.cpp counts) run on one CUDA device. Their weights are
// uploaded once, in the file's block layout, and may be shared with other contexts (gpu_weights.h,
// gpu_weight_cache.h); their K and V live in the device's memory (unless
// --no-kv-offload keeps them in the CPU cache, with attention on the CPU); the activations cross once per
// step each way (the residual stream after the CPU layers up, the logits or the residual stream down).
//
//   auto gpu = GpuOffload::create(model, {.n_gpu_layers = 99, .n_cells = 4096, ...});
//   forward: CPU layers [0, gpu->first_layer()), then gpu->forward(pass, batch, x).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "engine/arch/forward.h"
#include "engine/gpu/device_buffer.h"
#include "engine/gpu/gpu_memory.h"
#include "engine/gpu/gpu_weight_cache.h"
#include "engine/gpu/gpu_weights.h"
#include "engine/model/model.h"
#include "kernels/ggml_type.h"
#include "kernels/result.h"

namespace infertune {

struct GpuOffloadParams {
  int n_gpu_layers = 0;    // -ngl: the last N layers; > n_layers adds the output layer; < 0: all of them
  int main_gpu = 0;        // -mg: the device to use
  bool kv_offload = true;  // false (--no-kv-offload): K/V and attention stay on the CPU
  uint32_t n_cells = 0;    // KV cells (-c)
  GgmlType type_k = GgmlType::F16;
  GgmlType type_v = GgmlType::F16;
  uint32_t max_tokens = 512;  // the largest ubatch (-ub)
  size_t memory_budget = 0;   // bytes this offload may take on the device; 0: what the device has free
  // Where the weights come from: a cache that keeps them for the next context with the same model, split
  // and device; null: this offload uploads its own.
  GpuWeightCache* weights = nullptr;
};

class GpuOffload final : public LayerOffload {
 public:
  // Errors: no device, a weight or KV type without GPU kernels, out of device memory (naming what did not
  // fit and how much was free), a failed upload.
  static Result<std::unique_ptr<GpuOffload>> create(const Model& model, const GpuOffloadParams& params);
  ~GpuOffload() override;
  GpuOffload(const GpuOffload&) = delete;
  GpuOffload& operator=(const GpuOffload&) = delete;

  uint32_t first_layer() const override { return split_.first_layer; }
  bool runs_output() const override { return split_.output; }
  const GpuMemoryUse& memory() const { return memory_; }  // weights included, shared or not
  int device() const { return params_.main_gpu; }

  // Runs layers [first_layer(), n_layers) on x [n_tokens][n_embd] (the residual stream after the CPU
  // layers, in pass.scratch.x), then the output layer into batch.logits when it is here; otherwise x
  // comes back with the GPU layers' result for the CPU's output layer.
  Status forward(const ForwardPass& pass, const ForwardBatch& batch, std::span<float> x) override;

 private:
  struct LayerCache {
    DeviceBuffer k, v;
  };
  // The activations of one ubatch on the device.
  struct Activations {
    DeviceBuffer x, xn, q, k, v, attn, gate, up, proj, logits;
    DeviceBuffer weights_f16, input_f16;  // batched products: the dequantized matrix and the input
    DeviceBuffer cells, key_offset, n_keys, key_cells, rope_cos, rope_sin, output_rows;
  };

  GpuOffload(const Model& model, const GpuOffloadParams& params, OffloadSplit split);
  Result<DeviceBuffer> allocate(size_t bytes, std::string_view what, uint64_t GpuMemoryUse::*account);
  Status take_weights();
  Status allocate_kv();
  Status allocate_activations();
  Status upload_ubatch(const ForwardPass& pass, const ForwardBatch& batch, size_t n_tokens);
  Status linear(const GpuMatrix& w, const float* x, size_t n_tokens, float* y);
  Status layer_forward(const ForwardPass& pass, const ForwardBatch& batch, uint32_t il, size_t n_tokens);
  Status attention_on_cpu(const ForwardPass& pass, const ForwardBatch& batch, uint32_t il, size_t n_tokens);
  Status output_forward(const ForwardBatch& batch);

  const Model* model_;
  GpuOffloadParams params_;
  OffloadSplit split_;
  GpuMemoryUse memory_;
  void* stream_ = nullptr;
  void* blas_ = nullptr;
  std::shared_ptr<const GpuWeights> weights_;
  std::vector<LayerCache> caches_;  // [n_layers - first_layer]; empty with --no-kv-offload
  Activations act_;
  size_t key_cells_capacity_ = 0;  // entries act_.key_cells holds
};

}  // namespace infertune
