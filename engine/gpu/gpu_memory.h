#pragma once
// What an offload (-ngl) puts on the GPU, computed without a GPU: the engine allocates by these sizes
// (gpu_offload.cpp) and the sweep's memory model predicts with them, so prediction and allocation cannot
// drift apart. Also -ngl auto: the most layers whose prediction fits a memory budget.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/model/model_config.h"
#include "kernels/ggml_type.h"

namespace infertune {

// Why a mixture-of-experts model keeps every layer on the CPU: the GPU segment has no expert kernels yet.
inline constexpr const char* kGpuRunsNoExperts = "the GPU path does not run mixture-of-experts layers yet";

// -ngl auto: the most layers that fit the GPU (resolved before a context is made).
inline constexpr int kGpuLayersAuto = -2;

// The layers -ngl puts on the GPU: [first, n_layers), and whether the output layer goes too (llama.cpp's
// count: the last N repeating layers; N > n_layers adds the output; negative: all of it).
// On several devices (-sm layer, layer_split.h) each holds a run of them, [first_layer, end_layer), and the
// last one the output layer.
struct OffloadSplit {
  uint32_t first_layer = 0;
  uint32_t end_layer = 0;  // one past the last repeating layer here
  bool output = false;
  bool operator==(const OffloadSplit&) const = default;
};
OffloadSplit offload_split(int n_gpu_layers, uint32_t n_layers);

// The device bytes of each layer's tensors and of the output layer's (output.weight, or token_embd when
// tied, and output_norm), as uploaded: matrices in their file bytes, 1-D tensors as f32.
struct OffloadWeightBytes {
  std::vector<uint64_t> layers;  // [n_layers]
  uint64_t output = 0;
};

// Read off the file's tensor table ("blk.N.*" per layer); `matrix_bytes` gives a matrix's bytes (the sweep
// passes its size in another quantization type for a model variant), null: as stored.
using TensorBytesFn = std::function<uint64_t(const GgufTensorInfo&)>;
OffloadWeightBytes offload_weight_bytes(const GgufFile& file, const ModelConfig& config,
                                        const TensorBytesFn& matrix_bytes = nullptr);

// The activation buffers of an offload for ubatches of up to max_tokens tokens: the per-token activations,
// the ubatch's index lists and rope angles, the logits when the output layer is on the GPU, and the f16 and
// int8 copies of the batched products' inputs (only when batches exceed the matrix-vector kernel's tokens).
struct ActivationSizes {
  size_t x = 0, xn = 0, proj = 0, q = 0, k = 0, v = 0, attn = 0, gate = 0, up = 0;
  size_t cells = 0, key_offset = 0, n_keys = 0, rope = 0, output_rows = 0;
  // Sliding-window layers (gemma3): each token's windowed key range, and the rope angles of their own base.
  size_t window_key_offset = 0, window_n_keys = 0, window_rope = 0;
  size_t logits = 0;
  size_t weights_f16 = 0, input_f16 = 0;
  size_t input_q8 = 0, input_q8_scales = 0;  // the int8 path's quantized input and its scales
  size_t total() const;
};
ActivationSizes activation_sizes(const ModelConfig& config, uint32_t max_tokens, bool output_on_gpu);

// The values of the batched product's f16 weight buffer: a matrix is decoded a slice of rows at a time.
inline constexpr size_t kF16ChunkValues = size_t{32} << 20;

// Bytes of one head's row of a cache cell in `type` (head_dim whole blocks of it).
uint64_t gpu_kv_head_bytes(GgmlType type, uint32_t head_dim);

// K and V bytes of one layer's cache on the GPU (f32, f16, bf16, q8_0, q4_0; head sizes whole blocks).
uint64_t gpu_kv_bytes_per_layer(const ModelConfig& config, uint32_t n_cells, GgmlType type_k, GgmlType type_v);

struct GpuMemoryInputs {
  int n_gpu_layers = 0;
  bool kv_offload = true;
  uint32_t n_cells = 0;
  GgmlType type_k = GgmlType::F16;
  GgmlType type_v = GgmlType::F16;
  uint32_t max_tokens = 512;
};

// What an offload holds on the device.
struct GpuMemoryUse {
  uint64_t weights = 0;
  uint64_t kv = 0;
  uint64_t compute = 0;  // activations, index lists, the f16 buffers of batched products
  uint64_t total() const { return weights + kv + compute; }
  GpuMemoryUse& operator+=(const GpuMemoryUse& other) {
    weights += other.weights, kv += other.kv, compute += other.compute;
    return *this;
  }
};

// The device memory an offload of `in` takes on one device (zero for -ngl 0). n_gpu_layers must be resolved
// (not auto).
GpuMemoryUse predict_gpu_memory(const ModelConfig& config, const OffloadWeightBytes& weights,
                                const GpuMemoryInputs& in);
// The same for the share `split` of a device (in.n_gpu_layers is not read): its layers' weights and K/V,
// and the activation buffers every device holds.
GpuMemoryUse predict_split_memory(const ModelConfig& config, const OffloadWeightBytes& weights,
                                  const GpuMemoryInputs& in, OffloadSplit split);

// Device memory kept free beyond a prediction: the CUDA context, cuBLAS's workspace, the allocator's slack.
inline constexpr uint64_t kDeviceReserveBytes = uint64_t{512} << 20;

// What an offload may use of a device with `free_bytes` free: that less kDeviceReserveBytes (0 below it).
inline uint64_t usable_device_bytes(uint64_t free_bytes) {
  return free_bytes > kDeviceReserveBytes ? free_bytes - kDeviceReserveBytes : 0;
}

// Each CUDA device's memory, by device index; empty without a GPU. A sweep plans with these as the devices'
// free memory (what an idle device has; the engine splits and fits by the free memory it finds).
std::vector<uint64_t> gpu_device_memory();

}  // namespace infertune
