#pragma once
// The tensors of a KV cache: for every layer, KV head and cell, one row of keys and one of values, each
// encoded in its own type (f32, f16, bf16, q8_0 or q4_0; -ctk / -ctv) with the reference codecs of
// kernels/quant.h. Head-major ([layer][head][cell]): attention reads one head's rows of consecutive cells,
// so each task streams one contiguous block instead of a slice of every cell. Which cell holds what is
// KvCells' business, not this one's. Memory is reserved up front but only touched (committed by the OS)
// as cells are written.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "kernels/attention/attention.h"
#include "kernels/ggml_type.h"
#include "kernels/result.h"

namespace infertune {

struct KvLayout {
  uint32_t n_layers = 0;
  uint32_t n_cells = 0;
  uint32_t n_head_kv = 0;
  uint32_t head_dim_k = 0;
  uint32_t head_dim_v = 0;
  GgmlType type_k = GgmlType::F32;
  GgmlType type_v = GgmlType::F32;
};

// f32, f16, bf16, q8_0, q4_0 by name (case-insensitive); errors name the accepted ones.
Result<GgmlType> kv_type_from_name(std::string_view name);

// K and V bytes of one cell over all layers for `layout` (n_cells is not used), without allocating: what
// KvStorage::create(layout).bytes_per_cell() would be. The harness's memory model predicts with it.
// Errors as create() on an unsupported type or a head size that is not whole blocks.
Result<size_t> kv_bytes_per_cell(const KvLayout& layout);

class KvStorage {
 public:
  // Errors on an unsupported type, a head size that is not whole blocks of its type, or no memory.
  static Result<KvStorage> create(const KvLayout& layout);

  const KvLayout& layout() const { return layout_; }
  size_t k_row_bytes() const { return k_head_bytes_ * layout_.n_head_kv; }  // one cell of one layer, every KV head
  size_t v_row_bytes() const { return v_head_bytes_ * layout_.n_head_kv; }
  // K and V bytes of one cell over all layers: the memory one cached token costs.
  size_t bytes_per_cell() const { return (k_row_bytes() + v_row_bytes()) * layout_.n_layers; }
  size_t bytes() const { return bytes_per_cell() * layout_.n_cells; }

  // Encodes k [n_head_kv * head_dim_k] / v [n_head_kv * head_dim_v] into a cell of a layer.
  void write_k(uint32_t layer, uint32_t cell, std::span<const float> k);
  void write_v(uint32_t layer, uint32_t cell, std::span<const float> v);
  // Decodes a cell's key row.
  void read_k(uint32_t layer, uint32_t cell, std::span<float> k) const;

  // One KV head of one layer, as the attention kernels read it.
  KvHeadRows k_head(uint32_t layer, uint32_t head) const;
  KvHeadRows v_head(uint32_t layer, uint32_t head) const;

 private:
  // The row of one head of one cell: [n_layers][n_head_kv][n_cells][head bytes].
  std::byte* k_at(uint32_t layer, uint32_t head, uint32_t cell) const {
    return k_.get() +
           ((static_cast<size_t>(layer) * layout_.n_head_kv + head) * layout_.n_cells + cell) * k_head_bytes_;
  }
  std::byte* v_at(uint32_t layer, uint32_t head, uint32_t cell) const {
    return v_.get() +
           ((static_cast<size_t>(layer) * layout_.n_head_kv + head) * layout_.n_cells + cell) * v_head_bytes_;
  }

  KvLayout layout_;
  size_t k_head_bytes_ = 0;
  size_t v_head_bytes_ = 0;
  std::unique_ptr<std::byte[]> k_;  // [n_layers][n_head_kv][n_cells][k_head_bytes]
  std::unique_ptr<std::byte[]> v_;  // [n_layers][n_head_kv][n_cells][v_head_bytes]
};

}  // namespace infertune
