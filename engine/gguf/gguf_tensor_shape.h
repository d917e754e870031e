#pragma once
// The tensor rules shared by the GGUF reader and writer: valid names, and the element and byte counts
// of a shape, computed with every overflow checked.
#include <cstdint>
#include <string_view>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/result.h"

namespace infertune {

// Non-empty and at most kGgufMaxTensorNameBytes bytes.
Status check_tensor_name(std::string_view name);

struct TensorSize {
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;
};

// `dims` (ggml order, 1 to 4 nonzero entries, checked by the caller) of `traits`' type: the element
// count (which must fit ggml's int64), and the byte size, which must be whole blocks per row and stay
// representable when rounded up to `alignment`.
Result<TensorSize> tensor_size(const std::vector<uint64_t>& dims, const GgmlTypeTraits& traits, uint64_t alignment);

}  // namespace infertune
