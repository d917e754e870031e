#include "engine/context/kv_cache.h"

#include <new>

namespace infertune {

Result<KvCache> KvCache::create(uint32_t n_layers, uint32_t n_ctx, uint32_t k_dim, uint32_t v_dim) {
  KvCache cache;
  cache.n_layers_ = n_layers;
  cache.n_ctx_ = n_ctx;
  cache.k_dim_ = k_dim;
  cache.v_dim_ = v_dim;
  const size_t cells = static_cast<size_t>(n_layers) * n_ctx;
  try {
    cache.k_.assign(cells * k_dim, 0.0f);
    cache.v_.assign(cells * v_dim, 0.0f);
  } catch (const std::bad_alloc&) {
    return fail(
        "cannot allocate a KV cache of {:.1f} MiB ({} layers x {} positions x ({} + {}) floats); use a smaller -c",
        static_cast<double>(cells) * (k_dim + v_dim) * sizeof(float) / 1048576.0, n_layers, n_ctx, k_dim, v_dim);
  }
  return cache;
}

}  // namespace infertune
