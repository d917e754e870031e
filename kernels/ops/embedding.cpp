#include "kernels/ops/embedding.h"

#include "kernels/ops/ops_kernels.h"
#include "kernels/quant.h"

namespace infertune {

Status embedding_row(GgmlType type, std::span<const std::byte> table, uint64_t row, std::span<float> out) {
  const auto row_bytes = ggml_row_bytes(type, out.size());
  if (!row_bytes) {
    return fail("embedding: a {} row of {} values is not a whole number of blocks", ggml_type_name(type), out.size());
  }
  const uint64_t n_rows = *row_bytes == 0 ? 0 : table.size() / *row_bytes;
  if (row >= n_rows) return fail("embedding: row {} is outside the table of {} rows", row, n_rows);
  const std::span<const std::byte> src = table.subspan(row * *row_bytes, *row_bytes);
  if (DequantRowFn decode = ops_kernels().dequant_row(type)) {
    decode(src.data(), out.data(), out.size());
    return {};
  }
  return dequantize_row(type, src, out);
}

}  // namespace infertune
