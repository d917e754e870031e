#pragma once
// One device's share of the offloaded layers (gpu_offload.h holds them all): a run of consecutive layers
// [first_layer, end_layer), and the output layer when the share has it, on one CUDA device. Their weights
// come uploaded (gpu_weights.h, possibly shared with other contexts); their K and V live in the device's
// memory (unless --no-kv-offload keeps them in the CPU cache, with attention on the CPU); the residual
// stream comes up once per step and goes down once (or the logits do, from the share with the output layer).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/arch/forward.h"
#include "engine/gpu/device_buffer.h"
#include "engine/gpu/gpu_memory.h"
#include "engine/gpu/gpu_weights.h"
#include "engine/gpu/layer_split.h"
#include "engine/model/model.h"
#include "kernels/ggml_type.h"
#include "kernels/result.h"

namespace infertune {

// What every device's share is set up with.
struct GpuSegmentParams {
  bool kv_offload = true;  // false (--no-kv-offload): K/V and attention stay on the CPU
  uint32_t n_cells = 0;    // KV cells (-c)
  GgmlType type_k = GgmlType::F16;
  GgmlType type_v = GgmlType::F16;
  uint32_t max_tokens = 512;  // the largest ubatch (-ub)
  size_t memory_budget = 0;   // bytes a share may take on its device; 0: what the device has free
};

class GpuSegment {
 public:
  // `weights` must be `layers`' (same split and device). Errors: out of device memory for the K/V cache or
  // the activations (naming what did not fit and how much was free), a CUDA failure.
  static Result<std::unique_ptr<GpuSegment>> create(const Model& model, DeviceLayers layers,
                                                    const GpuSegmentParams& params,
                                                    std::shared_ptr<const GpuWeights> weights);
  ~GpuSegment();
  GpuSegment(const GpuSegment&) = delete;
  GpuSegment& operator=(const GpuSegment&) = delete;

  const OffloadSplit& split() const { return split_; }
  int device() const { return device_; }
  const GpuMemoryUse& memory() const { return memory_; }  // weights included, shared or not

  // Runs the share's layers on x [n_tokens][n_embd] (the residual stream so far, in host memory), then the
  // output layer into batch.logits when the share has it; otherwise x comes back with the layers' result.
  Status forward(const ForwardPass& pass, const ForwardBatch& batch, std::span<float> x);

 private:
  struct LayerCache {
    DeviceBuffer k, v;
  };
  // The activations of one ubatch on the device.
  struct Activations {
    DeviceBuffer x, xn, q, k, v, attn, gate, up, proj, logits;
    DeviceBuffer weights_f16, input_f16;     // batched products: the dequantized matrix and the input
    DeviceBuffer input_q8, input_q8_scales;  // the int8 path's input (linear_int8.cu)
    DeviceBuffer cells, key_offset, n_keys, key_cells, rope_cos, rope_sin, output_rows;
    // Sliding-window layers: the keys of each token's window (into key_cells) and their rope angles.
    DeviceBuffer window_key_offset, window_n_keys, window_rope_cos, window_rope_sin;
  };

  GpuSegment(const Model& model, DeviceLayers layers, const GpuSegmentParams& params,
             std::shared_ptr<const GpuWeights> weights);
  Result<DeviceBuffer> allocate(size_t bytes, std::string_view what, uint64_t GpuMemoryUse::*account);
  Status allocate_kv();
  Status allocate_activations();
  Status upload_ubatch(const ForwardPass& pass, const ForwardBatch& batch, size_t n_tokens);
  Status linear(const GpuMatrix& w, const float* x, size_t n_tokens, float* y);
  Status layer_forward(const ForwardPass& pass, const ForwardBatch& batch, uint32_t il, size_t n_tokens);
  Status attention_on_cpu(const ForwardPass& pass, const ForwardBatch& batch, uint32_t il, size_t n_tokens);
  Status post_norm(const DeviceBuffer& gain, float* y, int64_t n_tokens, const std::string& where);
  std::optional<uint32_t> first_sliding_layer() const;
  Status output_forward(const ForwardBatch& batch);

  const Model* model_;
  GpuSegmentParams params_;
  OffloadSplit split_;
  int device_ = 0;
  GpuMemoryUse memory_;
  void* stream_ = nullptr;
  void* blas_ = nullptr;
  std::shared_ptr<const GpuWeights> weights_;
  std::vector<LayerCache> caches_;  // [n_layers - first_layer]; empty with --no-kv-offload
  Activations act_;
  size_t key_cells_capacity_ = 0;  // entries act_.key_cells holds
};

}  // namespace infertune
