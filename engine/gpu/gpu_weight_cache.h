#pragma once
// Keeps the offloaded layers' weights between contexts: a bench run or a sweep worker makes one context per
// test or trial, and those with the same model, -ngl and devices (-sm, -ts, -mg) run on one upload instead of
// one each. Holds the weights of the last request: a different one releases what it does not reuse first,
// so that their device memory is free for the new upload (a context still running on them keeps them until
// that context goes).
//
//   GpuWeightCache cache;         // lives as long as the model, outside the contexts
//   params.gpu_weights = &cache;  // ContextParams: Context::create takes its weights from it
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "engine/gpu/gpu_weights.h"
#include "engine/gpu/layer_split.h"
#include "engine/model/model.h"
#include "kernels/result.h"

namespace infertune {

class GpuWeightCache {
 public:
  using Upload = std::function<Result<std::shared_ptr<const GpuWeights>>(const Model&, OffloadSplit, int device,
                                                                         uint64_t memory_budget)>;
  // `upload` makes one device's weights (tests pass a stand-in; the GPU is not needed to keep them).
  explicit GpuWeightCache(Upload upload = GpuWeights::upload) : upload_(std::move(upload)) {}

  // The weights of `model` for each device's share, in order: those held where they match, new uploads
  // (each within `memory_budget` on its device) for the rest, after the held ones not reused are released.
  // Errors: an upload's (nothing is held then).
  Result<std::vector<std::shared_ptr<const GpuWeights>>> get(const Model& model, std::span<const DeviceLayers> shares,
                                                             uint64_t memory_budget);

  // Device memory the held weights take on `device` (-ngl auto counts it as free: whatever it decides,
  // these bytes are reused or released before an upload).
  uint64_t held_bytes(int device) const;
  void clear() { held_.clear(); }
  size_t uploads() const { return uploads_; }  // how many device uploads get() has made

 private:
  Upload upload_;
  std::vector<std::shared_ptr<const GpuWeights>> held_;
  uint64_t held_model_ = 0;  // Model::load_id of the held weights' model
  size_t uploads_ = 0;
};

}  // namespace infertune
