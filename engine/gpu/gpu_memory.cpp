#include "engine/gpu/gpu_memory.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "kernels/cuda/cuda_devices.h"
#include "kernels/cuda/device_ops.h"

namespace infertune {

OffloadSplit offload_split(int n_gpu_layers, uint32_t n_layers) {
  if (n_gpu_layers < 0) return {0, n_layers, true};
  const auto n = static_cast<uint32_t>(n_gpu_layers);
  return {n_layers - std::min(n, n_layers), n_layers, n > n_layers};
}

OffloadWeightBytes offload_weight_bytes(const GgufFile& file, const ModelConfig& config,
                                        const TensorBytesFn& matrix_bytes) {
  OffloadWeightBytes out;
  out.layers.assign(config.n_layers, 0);
  const bool tied = file.find_tensor("output.weight") == nullptr;
  for (const GgufTensorInfo& t : file.tensors()) {
    const bool matrix = t.dims.size() >= 2 && t.dims[1] > 1;
    // 1-D tensors (norm gains, biases) are decoded to f32 at load and uploaded so.
    const uint64_t bytes = !matrix ? t.n_elements * sizeof(float) : matrix_bytes ? matrix_bytes(t) : t.n_bytes;
    const std::string_view name = t.name;
    if (name.starts_with("blk.")) {
      uint32_t layer = 0;
      const auto [end, ec] = std::from_chars(name.data() + 4, name.data() + name.size(), layer);
      if (ec == std::errc() && layer < config.n_layers) out.layers[layer] += bytes;
    } else if (name == "output.weight" || name == "output_norm.weight" || (tied && name == "token_embd.weight")) {
      out.output += bytes;
    }
  }
  return out;
}

size_t ActivationSizes::total() const {
  return x + xn + proj + q + k + v + attn + gate + up + cells + key_offset + n_keys + 2 * rope + output_rows + logits +
         weights_f16 + input_f16 + input_q8 + input_q8_scales + window_key_offset + window_n_keys + 2 * window_rope;
}

ActivationSizes activation_sizes(const ModelConfig& c, uint32_t max_tokens, bool output_on_gpu) {
  constexpr size_t kFloat = sizeof(float);
  const size_t t = std::max<uint32_t>(max_tokens, 1);
  ActivationSizes s;
  s.x = s.xn = s.proj = t * c.n_embd * kFloat;
  s.q = t * c.q_dim() * kFloat;
  s.k = t * c.k_dim() * kFloat;
  s.v = t * c.v_dim() * kFloat;
  s.attn = t * c.attn_out_dim() * kFloat;
  s.gate = s.up = t * c.n_ff * kFloat;
  s.cells = s.key_offset = s.n_keys = s.output_rows = t * sizeof(uint32_t);
  s.rope = t * std::max<uint32_t>(c.n_rot / 2, 1) * kFloat;  // cos and sin each
  if (c.sliding_window != 0) {
    s.window_key_offset = s.window_n_keys = t * sizeof(uint32_t);
    s.window_rope = s.rope;
  }
  if (output_on_gpu) s.logits = t * c.n_vocab * kFloat;
  if (t > static_cast<size_t>(cuda::kMatvecMaxTokens)) {
    s.weights_f16 = kF16ChunkValues * 2;
    const size_t widest = t * std::max({c.n_embd, c.n_ff, c.attn_out_dim()});
    s.input_f16 = widest * 2;
    s.input_q8 = widest;
    s.input_q8_scales = widest / 32 * kFloat;
  }
  return s;
}

uint64_t gpu_kv_head_bytes(GgmlType type, uint32_t head_dim) {
  const GgmlTypeTraits& t = ggml_type_traits(type);
  return uint64_t(head_dim) / t.block_elements * t.block_bytes;
}

uint64_t gpu_kv_bytes_per_layer(const ModelConfig& c, uint32_t n_cells, GgmlType type_k, GgmlType type_v) {
  return (gpu_kv_head_bytes(type_k, c.head_dim) + gpu_kv_head_bytes(type_v, c.head_dim_v)) * c.n_head_kv * n_cells;
}

GpuMemoryUse predict_gpu_memory(const ModelConfig& c, const OffloadWeightBytes& weights, const GpuMemoryInputs& in) {
  if (in.n_gpu_layers == 0) return {};
  return predict_split_memory(c, weights, in, offload_split(in.n_gpu_layers, c.n_layers));
}

GpuMemoryUse predict_split_memory(const ModelConfig& c, const OffloadWeightBytes& weights, const GpuMemoryInputs& in,
                                  OffloadSplit split) {
  GpuMemoryUse use;
  const uint32_t end = std::min(split.end_layer, c.n_layers);
  for (uint32_t il = split.first_layer; il < end && il < weights.layers.size(); ++il) use.weights += weights.layers[il];
  if (split.output) use.weights += weights.output;
  if (in.kv_offload && end > split.first_layer) {
    use.kv = gpu_kv_bytes_per_layer(c, in.n_cells, in.type_k, in.type_v) * (end - split.first_layer);
  }
  // The key lists grow with the context (one entry per attended cell); counted at a full context.
  use.compute = activation_sizes(c, in.max_tokens, split.output).total() + uint64_t(in.n_cells) * sizeof(uint32_t);
  return use;
}

std::vector<uint64_t> gpu_device_memory() {
  std::vector<uint64_t> memory;
  for (const CudaDevice& d : cuda_devices()) {
    if (d.index < 0) continue;
    if (static_cast<size_t>(d.index) >= memory.size()) memory.resize(static_cast<size_t>(d.index) + 1, 0);
    memory[static_cast<size_t>(d.index)] = d.memory_bytes;
  }
  return memory;
}

}  // namespace infertune
