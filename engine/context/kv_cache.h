#pragma once
// The KV cache storage of one context: for every layer and position, the key and value vectors of all KV
// heads, in f32. Storage only; which positions are filled is the Context's bookkeeping.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/result.h"

namespace infertune {

class KvCache {
 public:
  // Errors (rather than throwing) when the cache cannot be allocated.
  static Result<KvCache> create(uint32_t n_layers, uint32_t n_ctx, uint32_t k_dim, uint32_t v_dim);

  uint32_t n_layers() const { return n_layers_; }
  uint32_t n_ctx() const { return n_ctx_; }
  uint32_t k_dim() const { return k_dim_; }
  uint32_t v_dim() const { return v_dim_; }
  size_t bytes() const { return (k_.size() + v_.size()) * sizeof(float); }

  // The key / value vector [k_dim] / [v_dim] of `layer` at position `pos` (< n_ctx).
  float* k(uint32_t layer, uint32_t pos) { return k_.data() + offset(layer, pos, k_dim_); }
  float* v(uint32_t layer, uint32_t pos) { return v_.data() + offset(layer, pos, v_dim_); }
  const float* k(uint32_t layer, uint32_t pos) const { return k_.data() + offset(layer, pos, k_dim_); }
  const float* v(uint32_t layer, uint32_t pos) const { return v_.data() + offset(layer, pos, v_dim_); }

 private:
  size_t offset(uint32_t layer, uint32_t pos, uint32_t dim) const {
    return (static_cast<size_t>(layer) * n_ctx_ + pos) * dim;
  }

  uint32_t n_layers_ = 0;
  uint32_t n_ctx_ = 0;
  uint32_t k_dim_ = 0;
  uint32_t v_dim_ = 0;
  std::vector<float> k_;  // [n_layers][n_ctx][k_dim]
  std::vector<float> v_;  // [n_layers][n_ctx][v_dim]
};

}  // namespace infertune
