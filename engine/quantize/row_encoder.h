#pragma once
// Encodes the rows of one tensor into a ggml type, rows handed out in chunks to several threads, each thread
// holding one row of floats: `synth` (rows generated) and `quantize` (rows read from another file) share it.
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "kernels/ggml_type.h"
#include "kernels/result.h"

namespace infertune {

struct RowEncoding {
  std::string tensor_name;  // for error messages
  GgmlType type = GgmlType::F32;
  uint64_t row_length = 0;
  uint64_t n_rows = 0;
  unsigned threads = 1;
  // [n_experts][row_length] importance matrix (empty: none): row r uses slice r / (n_rows / n_experts), the
  // rows of one expert of a 3-D tensor sharing theirs.
  std::span<const float> importance;
};

// Fills `row` (row_length floats) with the values of row r; called from several threads at once.
using RowSource = std::function<Status(uint64_t r, std::span<float> row)>;

// data (exactly n_rows encoded rows) = every row of `source`, encoded. Errors name the tensor and the row.
Status encode_rows(const RowEncoding& encoding, const RowSource& source, std::span<std::byte> data);

// `requested` threads, or all hardware threads for 0, at most 256 (a mistyped -t).
unsigned encoder_threads(unsigned requested);

}  // namespace infertune
