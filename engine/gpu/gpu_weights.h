#pragma once
// The weights of the offloaded layers (-ngl) on one CUDA device: its share's layer matrices in the file's
// block layout, their norms and biases as f32, and the output layer when the share has it. They are
// uploaded once and shared: every context made with the same model, split and device can run on them
// (GpuWeightCache keeps them between contexts), so a bench or a sweep worker that measures several
// settings at one -ngl uploads the model once, as llama-bench keeps a model whose load parameters did not
// change.
//
//   auto weights = GpuWeights::upload(model, offload_split(99, n_layers), /*device=*/0, /*budget=*/0);
//   (*weights)->layer(il).q  // on the device
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/gpu/device_buffer.h"
#include "engine/gpu/gpu_memory.h"
#include "engine/model/model.h"
#include "kernels/ggml_type.h"
#include "kernels/result.h"

namespace infertune {

struct GpuMatrix {
  GgmlType type = GgmlType::F32;
  int64_t n_rows = 0;
  int64_t n_cols = 0;
  DeviceBuffer data;  // the file's bytes of the tensor
};

struct GpuLayerWeights {
  // f32; what the model lacks stays empty (biases: qwen2; head norms [head_dim]: qwen3, gemma3; the norms of
  // the sub-layers' outputs: gemma3)
  DeviceBuffer attn_norm, ffn_norm, q_bias, k_bias, v_bias, q_norm, k_norm, attn_post_norm, ffn_post_norm;
  GpuMatrix q, k, v, o, gate, up, down;
};

class GpuWeights {
 public:
  // Uploads the weights `split` puts on the GPU to `device` through a pinned staging buffer, printing the
  // progress of an upload over 1 GiB. `memory_budget`: the bytes they may take (0: what the device has).
  // Errors: a weight type or row length the GPU kernels do not take, out of device memory (naming the
  // tensor, what it needed and what was free), a failed copy.
  static Result<std::shared_ptr<const GpuWeights>> upload(const Model& model, OffloadSplit split, int device,
                                                          uint64_t memory_budget);

  // Empty weights for `split` (no tensor on the device): what upload starts from, and a stand-in in tests
  // of the code that only keeps or hands weights out.
  GpuWeights(OffloadSplit split, int device) : split_(split), device_(device) {}

  OffloadSplit split() const { return split_; }
  int device() const { return device_; }
  uint64_t bytes() const { return bytes_; }  // device memory they take
  // il in [split().first_layer, split().end_layer).
  const GpuLayerWeights& layer(uint32_t il) const { return layers_[il - split_.first_layer]; }
  const DeviceBuffer& output_norm() const { return output_norm_; }  // empty unless split().output
  const GpuMatrix& output() const { return output_; }

 private:
  friend class GpuWeightUpload;
  OffloadSplit split_;
  int device_ = 0;
  uint64_t bytes_ = 0;
  std::vector<GpuLayerWeights> layers_;  // [end_layer - first_layer]
  DeviceBuffer output_norm_;
  GpuMatrix output_;
};

}  // namespace infertune
