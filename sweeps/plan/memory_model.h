#pragma once
// Predicts the memory a trial needs before running it, so a sweep can skip the configurations that cannot
// fit (--max-mem): the weights, the KV cache and the compute buffers.
//   weights: the GGUF tensor table's bytes (memory-mapped: the pages read are the tensor data) or the
//            whole file (--no-mmap reads it into memory); for a quantization variant of a base model, the
//            base's tensors re-sized in the target type (matrices whose rows are whole blocks of it).
//   KV:      the engine's own accounting (kv_bytes_per_cell, engine/kv/kv_storage.h) x n_ctx cells:
//            what the context reserves, and what a full context holds, so what --max-mem must allow for.
//            The storage is not zeroed, so its pages become resident only when cells are written: a
//            workload that writes fewer cells than n_ctx has a smaller peak RSS. kv_resident estimates
//            that (per layer and KV head, K and V each are one block of n_ctx rows; the first written
//            cells' rows rounded up to 4 KiB pages), and expected_peak_rss() is the figure to compare
//            with a measured peak (tests/sweeps/memory_model_rss_test.cpp: within 4 MiB + 10%).
//   GPU:     with -ngl, what the offload puts on the device (engine/gpu/gpu_memory.h, the sizes the engine
//            allocates by): the offloaded layers' weights, their K/V, the GPU's activations. Over several
//            GPUs (-sm layer, engine/gpu/layer_split.h) each device's share is predicted on its own: its
//            layers' weights and K/V, and the activation buffers every device holds. The host still maps
//            every weight; the offloaded layers' K/V rows on the host are never written.
//   compute: the forward pass's activations for the largest piece a decode evaluates (the buffers of
//            ForwardScratch::reserve, engine/arch/forward.h) plus the logits kept. Not counted: the
//            attention kernels' per-thread tiles and the quantized copy of the activations (both small
//            next to the above), the thread stacks and the allocator's overhead.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/gpu/gpu_memory.h"
#include "engine/gpu/layer_split.h"
#include "engine/model/model_config.h"
#include "kernels/ggml_type.h"
#include "kernels/result.h"

namespace infertune {

// What the memory model needs to know about a model (read from its GGUF header, no weights loaded).
struct ModelShape {
  ModelConfig config;
  uint64_t tensor_bytes = 0;     // all tensor data as stored (or as it would be in the variant's type)
  uint64_t file_bytes = 0;       // the whole file (for the variant: the base's overhead + tensor_bytes)
  OffloadWeightBytes offload{};  // per layer and output layer, as uploaded to a GPU
};

// `quant_type`: the shape of the variant of `file` with its weight matrices in that type.
Result<ModelShape> model_shape(const GgufFile& file, std::optional<GgmlType> quant_type = std::nullopt);
Result<ModelShape> read_model_shape(const std::string& path, std::optional<GgmlType> quant_type = std::nullopt);

struct MemoryInputs {
  uint32_t n_ctx = 0;
  uint32_t n_batch = 2048;
  uint32_t n_ubatch = 512;
  uint32_t max_decode_tokens = 1;  // the most tokens the workload hands one decode
  uint32_t n_outputs = 1;          // logits rows one decode keeps
  GgmlType type_k = GgmlType::F16;
  GgmlType type_v = GgmlType::F16;
  bool use_mmap = true;
  uint32_t kv_cells_written = 0;  // cells the workload writes (its tokens over every sequence); 0: n_ctx
  int n_gpu_layers = 0;           // -ngl, resolved (not auto)
  bool kv_offload = true;
  std::vector<DeviceLayers> gpu_shares = {};  // each GPU's layers (split_layers); empty: all on one GPU
};

// One GPU's part of an offload.
struct DeviceMemoryUse {
  DeviceLayers share;
  GpuMemoryUse use;
};

struct MemoryPrediction {
  uint64_t weights = 0;
  uint64_t kv = 0;
  uint64_t compute = 0;
  uint64_t kv_resident = 0;                  // the KV pages the workload's kv_cells_written touch (<= kv)
  GpuMemoryUse gpu;                          // on the GPUs (-ngl), summed, apart from the host figures above
  std::vector<DeviceMemoryUse> gpu_devices;  // per GPU, when MemoryInputs::gpu_shares named them
  // What the context needs when its cache is full: the figure --max-mem compares.
  uint64_t total() const { return weights + kv + compute; }
  // The peak RSS to expect from the workload itself (the cells it writes, not the whole reservation).
  uint64_t expected_peak_rss() const { return weights + kv_resident + compute; }
};

// The most tokens one decode evaluates at once (a piece of a batch), at least 1.
uint32_t largest_piece(const MemoryInputs& in);

// What the GPU part of the prediction reads (engine/gpu/gpu_memory.h); in.n_gpu_layers as given (auto too).
GpuMemoryInputs gpu_memory_inputs(const MemoryInputs& in);

// Errors when the KV types do not fit the model's head sizes (the engine would refuse the context).
Result<MemoryPrediction> predict_memory(const ModelShape& model, const MemoryInputs& in);

// The bytes ForwardScratch::reserve(config, n_tokens) allocates for its float buffers.
uint64_t forward_scratch_bytes(const ModelConfig& config, uint64_t n_tokens);

}  // namespace infertune
