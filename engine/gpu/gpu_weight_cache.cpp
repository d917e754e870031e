#include "engine/gpu/gpu_weight_cache.h"

#include <algorithm>

namespace infertune {
namespace {

bool holds(const GpuWeights& weights, const DeviceLayers& share) {
  return weights.device() == share.device && weights.split() == share.split;
}

}  // namespace

Result<std::vector<std::shared_ptr<const GpuWeights>>> GpuWeightCache::get(const Model& model,
                                                                           std::span<const DeviceLayers> shares,
                                                                           uint64_t memory_budget) {
  std::vector<std::shared_ptr<const GpuWeights>> out(shares.size());
  if (held_model_ == model.load_id()) {
    for (size_t i = 0; i < shares.size(); ++i) {
      const auto it = std::find_if(held_.begin(), held_.end(), [&](const auto& w) { return holds(*w, shares[i]); });
      if (it != held_.end()) out[i] = *it;
    }
  }
  held_.clear();  // what is not reused goes before anything is uploaded
  held_model_ = model.load_id();
  for (size_t i = 0; i < shares.size(); ++i) {
    if (out[i]) continue;
    auto weights = upload_(model, shares[i].split, shares[i].device, memory_budget);
    if (!weights) return weights.error();
    ++uploads_;
    out[i] = std::move(*weights);
  }
  held_ = out;
  return out;
}

uint64_t GpuWeightCache::held_bytes(int device) const {
  uint64_t bytes = 0;
  for (const auto& w : held_) bytes += w->device() == device ? w->bytes() : 0;
  return bytes;
}

}  // namespace infertune
