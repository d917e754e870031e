#include "kernels/ops/embedding.h"

#include <vector>

#include "kernels/matmul/interleaved_rows.h"
#include "kernels/ops/ops_kernels.h"
#include "kernels/quant.h"

namespace infertune {

Status embedding_row(GgmlType type, std::span<const std::byte> table, uint64_t row, std::span<float> out,
                     WeightLayout layout) {
  const auto row_bytes = ggml_row_bytes(type, out.size());
  if (!row_bytes) {
    return fail("embedding: a {} row of {} values is not a whole number of blocks", ggml_type_name(type), out.size());
  }
  const uint64_t n_rows = *row_bytes == 0 ? 0 : table.size() / *row_bytes;
  if (row >= n_rows) return fail("embedding: row {} is outside the table of {} rows", row, n_rows);
  std::span<const std::byte> src = table.subspan(row * *row_bytes, *row_bytes);
  // A repacked table's row is spread over its group of 8: rebuild the file's bytes of it first.
  thread_local std::vector<std::byte> rebuilt;
  if (layout == WeightLayout::interleaved8) {
    rebuilt.resize(*row_bytes);
    if (Status s = row_of_interleaved(type, table, n_rows, out.size(), row, rebuilt); !s) {
      return fail("embedding: {}", s.error().message);
    }
    src = rebuilt;
  }
  if (DequantRowFn decode = ops_kernels().dequant_row(type)) {
    decode(src.data(), out.data(), out.size());
    return {};
  }
  return dequantize_row(type, src, out);
}

}  // namespace infertune
