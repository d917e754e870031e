#pragma once
// Keeps the offloaded layers' weights between contexts: a bench run or a sweep worker makes one context per
// test or trial, and those with the same model, -ngl and device run on one upload instead of one each.
// Holds one set of weights, the last asked for: asking for another releases it first, so that its device
// memory is free for the new upload (a context still running on it keeps it until that context goes).
//
//   GpuWeightCache cache;                      // lives as long as the model, outside the contexts
//   params.gpu_weights = &cache;               // ContextParams: Context::create takes its weights from it
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "engine/gpu/gpu_weights.h"
#include "engine/model/model.h"
#include "kernels/result.h"

namespace infertune {

class GpuWeightCache {
 public:
  using Upload = std::function<Result<std::shared_ptr<const GpuWeights>>(const Model&, OffloadSplit, int device,
                                                                         uint64_t memory_budget)>;
  // `upload` makes the weights (tests pass a stand-in; the GPU is not needed to keep them).
  explicit GpuWeightCache(Upload upload = GpuWeights::upload) : upload_(std::move(upload)) {}

  // The weights of `model`'s `split` on `device`: the held ones when they are those, else a new upload
  // (after releasing the held ones). Errors: the upload's.
  Result<std::shared_ptr<const GpuWeights>> get(const Model& model, OffloadSplit split, int device,
                                                uint64_t memory_budget);

  // Device memory the held weights take on `device` (-ngl auto counts it as free: whatever it decides,
  // these bytes are reused or released before an upload).
  uint64_t held_bytes(int device) const { return held_ && held_->device() == device ? held_->bytes() : 0; }
  void clear() { held_.reset(); }
  size_t uploads() const { return uploads_; }  // how many uploads get() has made

 private:
  Upload upload_;
  std::shared_ptr<const GpuWeights> held_;
  uint64_t held_model_ = 0;  // Model::load_id of the held weights' model
  size_t uploads_ = 0;
};

}  // namespace infertune
