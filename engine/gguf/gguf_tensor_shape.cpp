#include "engine/gguf/gguf_tensor_shape.h"

#include <limits>
#include <optional>

#include "engine/gguf/gguf_limits.h"

namespace infertune {
namespace {

// ggml keeps element counts in int64_t.
constexpr uint64_t kMaxElements = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
constexpr uint64_t kMaxBytes = std::numeric_limits<uint64_t>::max();

}  // namespace

Status check_tensor_name(std::string_view name) {
  if (name.empty()) return fail("empty tensor name");
  if (name.size() > kGgufMaxTensorNameBytes) {
    return fail("tensor name '{}...' is {} bytes long; the limit is {} (ggml's GGML_MAX_NAME)", name.substr(0, 32),
                name.size(), kGgufMaxTensorNameBytes);
  }
  return Status::success();
}

Result<TensorSize> tensor_size(const std::vector<uint64_t>& dims, const GgmlTypeTraits& traits, uint64_t alignment) {
  uint64_t elements = 1;
  for (uint64_t dim : dims) {
    if (dim == 0 || elements > kMaxElements / dim) {
      return dim == 0 ? fail("a dimension is zero") : fail("element count overflows 64 bits (ggml counts in int64)");
    }
    elements *= dim;
  }
  if (dims[0] % traits.block_elements != 0) {
    return fail("row length {} is not a multiple of the {} block size {}", dims[0], traits.name, traits.block_elements);
  }
  std::optional<uint64_t> bytes = ggml_row_bytes(traits.type, dims[0]);
  for (size_t i = 1; bytes && i < dims.size(); ++i) {
    bytes = *bytes > kMaxBytes / dims[i] ? std::nullopt : std::optional<uint64_t>(*bytes * dims[i]);
  }
  if (!bytes) return fail("byte size of {} {} elements overflows 64 bits", elements, traits.name);
  if (*bytes > kMaxBytes - (alignment - 1)) {
    return fail("byte size {} overflows 64 bits when rounded up to the alignment {}", *bytes, alignment);
  }
  return TensorSize{elements, *bytes};
}

}  // namespace infertune
