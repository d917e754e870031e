#include "engine/gpu/gpu_offload.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "kernels/cuda/device_ops.h"
#include "kernels/cuda/device_runtime.h"

namespace infertune {
namespace {

uint32_t type_id(GgmlType t) { return static_cast<uint32_t>(t); }

// Each device's free memory, the weights a cache holds there counted as free as -ngl auto counts them (so
// that the split does not depend on what is held): -sm layer without -ts deals the layers in proportion to
// it. Zeros where it is not needed or cannot be read.
std::vector<uint64_t> free_memory(int count, const GpuOffloadParams& params) {
  const bool by_memory =
      params.split_mode == SplitMode::layer && count > 1 &&
      std::all_of(params.tensor_split.begin(), params.tensor_split.end(), [](double p) { return p == 0; });
  if (by_memory) {
    if (auto free = free_device_memory(params.weights); free && free->size() == static_cast<size_t>(count)) {
      return *free;
    }
  }
  return std::vector<uint64_t>(static_cast<size_t>(count), 0);
}

Status check_shares(const std::vector<DeviceLayers>& shares, uint32_t n_layers) {
  if (shares.empty()) return fail("no layer to offload");
  for (size_t i = 0; i < shares.size(); ++i) {
    const OffloadSplit& s = shares[i].split;
    const bool last = i + 1 == shares.size();
    if (s.first_layer > s.end_layer || (i > 0 && s.first_layer != shares[i - 1].split.end_layer) ||
        (s.output && !last) || (last && s.end_layer != n_layers)) {
      return fail("GPU share {} (device {}, layers {}..{}): the shares must be consecutive runs ending at layer {}", i,
                  shares[i].device, s.first_layer, s.end_layer, n_layers);
    }
  }
  return {};
}

}  // namespace

Result<std::vector<uint64_t>> free_device_memory(const GpuWeightCache* held) {
  int count = 0;
  if (int code = cuda::device_count(&count); code != 0 || count == 0) {
    return fail("no CUDA device ({})", code != 0 ? cuda::error_text(code) : "the driver reports none");
  }
  std::vector<uint64_t> free(static_cast<size_t>(count));
  for (int d = 0; d < count; ++d) {
    if (int code = cuda::set_device(d); code != 0) return fail("GPU {}: {}", d, cuda::error_text(code));
    size_t free_bytes = 0, total_bytes = 0;
    if (int code = cuda::memory_info(&free_bytes, &total_bytes); code != 0) {
      return fail("cannot read GPU {}'s free memory: {}", d, cuda::error_text(code));
    }
    free[static_cast<size_t>(d)] = free_bytes + (held ? held->held_bytes(d) : 0);
  }
  return free;
}

Result<std::unique_ptr<GpuOffload>> GpuOffload::create(const Model& model, const GpuOffloadParams& params) {
  int count = 0;
  if (int code = cuda::device_count(&count); code != 0 || count == 0) {
    return fail("-ngl {}: no CUDA device ({})", params.n_gpu_layers,
                code != 0 ? cuda::error_text(code) : std::string("the driver reports none"));
  }
  if (params.main_gpu < 0 || params.main_gpu >= count) {
    return fail("-mg {}: there {} {} CUDA device{} (0..{})", params.main_gpu, count == 1 ? "is" : "are", count,
                count == 1 ? "" : "s", count - 1);
  }
  const LayerSplitOptions options{
      .mode = params.split_mode, .main_gpu = params.main_gpu, .proportions = params.tensor_split};
  auto shares = split_layers(params.n_gpu_layers, model.config().n_layers, options, free_memory(count, params));
  if (!shares) return shares.error();
  return create_on(model, params, std::move(*shares));
}

Result<std::unique_ptr<GpuOffload>> GpuOffload::create_on(const Model& model, const GpuOffloadParams& params,
                                                          std::vector<DeviceLayers> shares) {
  if (Status s = check_shares(shares, model.config().n_layers); !s) return s.error();
  if (model.config().is_moe()) return fail("-ngl {}: {}", params.n_gpu_layers, kGpuRunsNoExperts);
  if (params.kv_offload) {
    for (GgmlType t : {params.type_k, params.type_v}) {
      if (!cuda::kv_type_supported(type_id(t))) {
        return fail("KV cache type {}: the GPU cache takes f32, f16, bf16, q8_0 or q4_0", ggml_type_name(t));
      }
    }
  }
  std::vector<std::shared_ptr<const GpuWeights>> weights(shares.size());
  if (params.weights != nullptr) {
    auto kept = params.weights->get(model, shares, params.memory_budget);
    if (!kept) return kept.error();
    weights = std::move(*kept);
  } else {
    for (size_t i = 0; i < shares.size(); ++i) {
      auto uploaded = GpuWeights::upload(model, shares[i].split, shares[i].device, params.memory_budget);
      if (!uploaded) return uploaded.error();
      weights[i] = std::move(*uploaded);
    }
  }
  const GpuSegmentParams segment_params{.kv_offload = params.kv_offload,
                                        .n_cells = params.n_cells,
                                        .type_k = params.type_k,
                                        .type_v = params.type_v,
                                        .max_tokens = params.max_tokens,
                                        .memory_budget = params.memory_budget};
  std::unique_ptr<GpuOffload> gpu(new GpuOffload());
  for (size_t i = 0; i < shares.size(); ++i) {
    auto segment = GpuSegment::create(model, shares[i], segment_params, std::move(weights[i]));
    if (!segment) return segment.error();
    gpu->segments_.push_back(std::move(*segment));
  }
  return gpu;
}

GpuMemoryUse GpuOffload::memory() const {
  GpuMemoryUse sum;
  for (const auto& s : segments_) sum += s->memory();
  return sum;
}

std::vector<int> GpuOffload::devices() const {
  std::vector<int> out;
  for (const auto& s : segments_) out.push_back(s->device());
  return out;
}

Status GpuOffload::forward(const ForwardPass& pass, const ForwardBatch& batch, std::span<float> x) {
  for (const auto& segment : segments_) {
    if (Status s = segment->forward(pass, batch, x); !s) return s;
  }
  return {};
}

}  // namespace infertune
