#include "engine/gpu/gpu_weight_cache.h"

namespace infertune {

Result<std::shared_ptr<const GpuWeights>> GpuWeightCache::get(const Model& model, OffloadSplit split, int device,
                                                              uint64_t memory_budget) {
  if (held_ && held_model_ == model.load_id() && held_->device() == device &&
      held_->split().first_layer == split.first_layer && held_->split().output == split.output) {
    return held_;
  }
  held_.reset();
  auto weights = upload_(model, split, device, memory_budget);
  if (!weights) return weights.error();
  ++uploads_;
  held_ = *weights;
  held_model_ = model.load_id();
  return held_;
}

}  // namespace infertune
