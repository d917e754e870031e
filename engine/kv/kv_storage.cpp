#include "engine/kv/kv_storage.h"

#include <new>

#include "kernels/quant.h"

namespace infertune {

Result<GgmlType> kv_type_from_name(std::string_view name) {
  const auto type = ggml_type_from_name(name);
  if (!type || !is_attention_kv_type(*type)) {
    return fail("KV cache type '{}' is not one of f32, f16, bf16, q8_0, q4_0", name);
  }
  return *type;
}

namespace {

// Bytes of one head row; errors when the head is not whole blocks of the type.
Result<size_t> head_bytes(GgmlType type, uint32_t head_dim, const char* what) {
  if (!is_attention_kv_type(type)) {
    return fail("KV cache {} type {} is not one of f32, f16, bf16, q8_0, q4_0", what, ggml_type_name(type));
  }
  const auto bytes = ggml_row_bytes(type, head_dim);
  if (!bytes || head_dim == 0) {
    return fail("KV cache {} type {} needs a head size that is a multiple of {}; this model's is {}", what,
                ggml_type_name(type), ggml_type_traits(type).block_elements, head_dim);
  }
  return static_cast<size_t>(*bytes);
}

}  // namespace

Result<size_t> kv_bytes_per_cell(const KvLayout& layout) {
  auto k_head = head_bytes(layout.type_k, layout.head_dim_k, "K");
  if (!k_head) return k_head.error();
  auto v_head = head_bytes(layout.type_v, layout.head_dim_v, "V");
  if (!v_head) return v_head.error();
  return (*k_head + *v_head) * layout.n_head_kv * layout.n_layers;
}

Result<KvStorage> KvStorage::create(const KvLayout& layout) {
  auto k_head = head_bytes(layout.type_k, layout.head_dim_k, "K");
  if (!k_head) return k_head.error();
  auto v_head = head_bytes(layout.type_v, layout.head_dim_v, "V");
  if (!v_head) return v_head.error();
  KvStorage s;
  s.layout_ = layout;
  s.k_head_bytes_ = *k_head;
  s.v_head_bytes_ = *v_head;
  const size_t rows = static_cast<size_t>(layout.n_layers) * layout.n_cells;
  try {
    // Not zeroed: only written cells are read, and untouched pages cost no memory.
    s.k_ = std::make_unique_for_overwrite<std::byte[]>(rows * s.k_row_bytes());
    s.v_ = std::make_unique_for_overwrite<std::byte[]>(rows * s.v_row_bytes());
  } catch (const std::bad_alloc&) {
    return fail(
        "cannot allocate a KV cache of {:.1f} MiB ({} layers x {} cells, K {} + V {} bytes per cell and layer); "
        "use a smaller -c or a smaller -ctk / -ctv type",
        static_cast<double>(rows) * static_cast<double>(s.k_row_bytes() + s.v_row_bytes()) / 1048576.0, layout.n_layers,
        layout.n_cells, s.k_row_bytes(), s.v_row_bytes());
  }
  return s;
}

// The spans are sized by the layout (the callers are the forward pass), so the codec checks cannot fail.
void KvStorage::write_k(uint32_t layer, uint32_t cell, std::span<const float> k) {
  const uint32_t dim = layout_.head_dim_k;
  for (uint32_t h = 0; h < layout_.n_head_kv; ++h) {
    (void)quantize_row(layout_.type_k, k.subspan(static_cast<size_t>(h) * dim, dim),
                       std::span<std::byte>(k_at(layer, h, cell), k_head_bytes_));
  }
}

void KvStorage::write_v(uint32_t layer, uint32_t cell, std::span<const float> v) {
  const uint32_t dim = layout_.head_dim_v;
  for (uint32_t h = 0; h < layout_.n_head_kv; ++h) {
    (void)quantize_row(layout_.type_v, v.subspan(static_cast<size_t>(h) * dim, dim),
                       std::span<std::byte>(v_at(layer, h, cell), v_head_bytes_));
  }
}

void KvStorage::read_k(uint32_t layer, uint32_t cell, std::span<float> k) const {
  const uint32_t dim = layout_.head_dim_k;
  for (uint32_t h = 0; h < layout_.n_head_kv; ++h) {
    (void)dequantize_row(layout_.type_k, std::span<const std::byte>(k_at(layer, h, cell), k_head_bytes_),
                         k.subspan(static_cast<size_t>(h) * dim, dim));
  }
}

KvHeadRows KvStorage::k_head(uint32_t layer, uint32_t head) const {
  return {layout_.type_k, k_at(layer, head, 0), k_head_bytes_, layout_.head_dim_k};
}

KvHeadRows KvStorage::v_head(uint32_t layer, uint32_t head) const {
  return {layout_.type_v, v_at(layer, head, 0), v_head_bytes_, layout_.head_dim_v};
}

}  // namespace infertune
