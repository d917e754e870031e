#pragma once
// Token embedding lookup: one row of a (possibly quantized) [n_vocab][n_embd] table, decoded to floats.
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/ggml_type.h"
#include "kernels/matmul/interleaved_rows.h"
#include "kernels/result.h"

namespace infertune {

// Decodes row `row` of `table` (rows of out.size() values of `type`, laid out as in a GGUF tensor) into
// out. Errors when the type has no codec, the row length does not fit its blocks, or the row lies outside
// the table. An interleaved table (a tied output projection repacked at load) is read in that layout.
Status embedding_row(GgmlType type, std::span<const std::byte> table, uint64_t row, std::span<float> out,
                     WeightLayout layout = WeightLayout::rows);

}  // namespace infertune
