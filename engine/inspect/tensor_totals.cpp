#include "engine/inspect/tensor_totals.h"

namespace infertune {

TensorTotals tensor_totals(const std::vector<GgufTensorInfo>& tensors) {
  TensorTotals totals;
  for (const auto& t : tensors) {
    TypeTotals& per_type = totals.by_type[t.type];
    ++per_type.tensors;
    per_type.parameters += t.n_elements;
    per_type.bytes += t.n_bytes;
    ++totals.tensors;
    totals.parameters += t.n_elements;
    totals.bytes += t.n_bytes;
  }
  return totals;
}

}  // namespace infertune
