#include "kernels/matmul/matmul.h"

namespace infertune {

Status check_matmul_problem(const MatmulProblem& p) {
  const auto row_bytes = ggml_row_bytes(p.type, p.n_cols);
  if (!row_bytes) {
    return fail("matmul: a {} row of {} values is not a whole number of {}-value blocks", ggml_type_name(p.type),
                p.n_cols, ggml_type_traits(p.type).block_elements);
  }
  if (p.weights.size() != *row_bytes * p.n_rows) {
    return fail("matmul: {} weights of {} rows x {} values need {} bytes, got {}", ggml_type_name(p.type), p.n_rows,
                p.n_cols, *row_bytes * p.n_rows, p.weights.size());
  }
  if (p.layout == WeightLayout::interleaved8 &&
      (!has_interleaved_layout(p.type) || p.n_rows % kInterleavedRows != 0)) {
    return fail("matmul: {} weights of {} rows cannot be in the interleaved layout", ggml_type_name(p.type), p.n_rows);
  }
  if (p.n_tokens > 0 && p.n_rows > 0 && (p.x == nullptr || p.y == nullptr)) {
    return fail("matmul: missing activation or output buffer");
  }
  if (p.xq && (p.xq->x() != p.x || p.xq->n_tokens() != p.n_tokens || p.xq->n_cols() != p.n_cols)) {
    return fail("matmul: the quantized activations ({} tokens x {} values) are not of this input ({} x {})",
                p.xq->n_tokens(), p.xq->n_cols(), p.n_tokens, p.n_cols);
  }
  return {};
}

}  // namespace infertune
