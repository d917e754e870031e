#pragma once
// Parameter and byte totals of a GGUF file's tensor table, overall and per element type.
#include <cstdint>
#include <map>
#include <vector>

#include "engine/gguf/gguf_file.h"

namespace infertune {

struct TypeTotals {
  uint64_t tensors = 0;
  uint64_t parameters = 0;
  uint64_t bytes = 0;
};

struct TensorTotals {
  uint64_t tensors = 0;
  uint64_t parameters = 0;
  uint64_t bytes = 0;
  std::map<GgmlType, TypeTotals> by_type;

  double bits_per_weight() const { return parameters ? 8.0 * static_cast<double>(bytes) / parameters : 0.0; }
};

TensorTotals tensor_totals(const std::vector<GgufTensorInfo>& tensors);

}  // namespace infertune
