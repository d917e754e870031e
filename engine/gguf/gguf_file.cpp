#include "engine/gguf/gguf_file.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "engine/gguf/gguf_known_keys.h"
#include "engine/gguf/gguf_parser.h"
#include "engine/gguf/mapped_file.h"

namespace infertune {
namespace {

template <class T>
constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Binary search over `order` (indices sorted by name_of).
template <class NameOf>
const size_t* find_sorted(const std::vector<size_t>& order, std::string_view name, NameOf name_of) {
  auto it = std::lower_bound(order.begin(), order.end(), name,
                             [&](size_t index, std::string_view wanted) { return name_of(index) < wanted; });
  return it != order.end() && name_of(*it) == name ? &*it : nullptr;
}

}  // namespace

Result<GgufFile> GgufFile::open(const std::string& path) {
  auto mapping = MappedFile::open(path);
  if (!mapping) return mapping.error();
  auto file = parse((*mapping)->bytes(), path);
  if (!file) return file.error();
  file->mapping_ = std::move(*mapping);
  return file;
}

Result<GgufFile> GgufFile::parse(std::span<const std::byte> bytes, std::string source_name) {
  GgufFile file;
  file.source_name_ = std::move(source_name);
  if (Status s = GgufParser::parse(bytes, file); !s) return fail("{}: {}", file.source_name_, s.error().message);
  return file;
}

const GgufValue* GgufFile::find(std::string_view key) const {
  const size_t* index = find_sorted(key_order_, key, [&](size_t i) -> std::string_view { return metadata_[i].key; });
  return index != nullptr ? &metadata_[*index].value : nullptr;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const size_t* index =
      find_sorted(tensor_order_, name, [&](size_t i) -> std::string_view { return tensors_[i].name; });
  return index != nullptr ? &tensors_[*index] : nullptr;
}

std::span<const std::byte> GgufFile::tensor_data(const GgufTensorInfo& tensor) const {
  // The parser checked every tensor of this file; the check here only guards against a tensor info
  // that came from somewhere else.
  const uint64_t data_bytes = bytes_.size() > data_offset_ ? bytes_.size() - data_offset_ : 0;
  if (tensor.n_bytes > data_bytes || tensor.offset > data_bytes - tensor.n_bytes) return {};
  return bytes_.subspan(data_offset_ + tensor.offset, tensor.n_bytes);
}

namespace {

Error missing(const std::string& source, std::string_view key) { return fail("{}: key '{}' not found", source, key); }

Error wrong_type(const std::string& source, std::string_view key, const GgufValue& value, std::string_view expected) {
  return fail("{}: key '{}' has type {}, expected {}", source, key, describe_value_type(value), expected);
}

}  // namespace

Result<uint64_t> GgufFile::get_uint(std::string_view key) const {
  const GgufValue* value = find(key);
  if (value == nullptr) return missing(source_name_, key);
  return std::visit(
      [&](const auto& v) -> Result<uint64_t> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (kIsInteger<T>) {
          if constexpr (std::is_signed_v<T>) {
            if (v < 0) return fail("{}: key '{}' holds {}, expected a non-negative integer", source_name_, key, v);
          }
          return static_cast<uint64_t>(v);
        } else {
          return wrong_type(source_name_, key, *value, "an unsigned integer");
        }
      },
      value->storage);
}

Result<int64_t> GgufFile::get_int(std::string_view key) const {
  const GgufValue* value = find(key);
  if (value == nullptr) return missing(source_name_, key);
  return std::visit(
      [&](const auto& v) -> Result<int64_t> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, uint64_t>) {
          if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            return fail("{}: key '{}' holds {}, which does not fit in an int64", source_name_, key, v);
          }
          return static_cast<int64_t>(v);
        } else if constexpr (kIsInteger<T>) {
          return static_cast<int64_t>(v);
        } else {
          return wrong_type(source_name_, key, *value, "an integer");
        }
      },
      value->storage);
}

Result<double> GgufFile::get_float(std::string_view key) const {
  const GgufValue* value = find(key);
  if (value == nullptr) return missing(source_name_, key);
  if (const auto* f = std::get_if<float>(&value->storage)) return static_cast<double>(*f);
  if (const auto* d = std::get_if<double>(&value->storage)) return *d;
  return wrong_type(source_name_, key, *value, "f32 or f64");
}

Result<bool> GgufFile::get_bool(std::string_view key) const {
  const GgufValue* value = find(key);
  if (value == nullptr) return missing(source_name_, key);
  if (const auto* b = std::get_if<bool>(&value->storage)) return *b;
  return wrong_type(source_name_, key, *value, "bool");
}

Result<std::string_view> GgufFile::get_string(std::string_view key) const {
  const GgufValue* value = find(key);
  if (value == nullptr) return missing(source_name_, key);
  if (const auto* s = std::get_if<std::string>(&value->storage)) return std::string_view(*s);
  return wrong_type(source_name_, key, *value, "string");
}

Result<const GgufArray*> GgufFile::get_array(std::string_view key, GgufValueType element_type) const {
  const GgufValue* value = find(key);
  if (value == nullptr) return missing(source_name_, key);
  const auto* array = std::get_if<GgufArray>(&value->storage);
  if (array == nullptr || array->element_type() != element_type) {
    return wrong_type(source_name_, key, *value, "array of " + std::string(gguf_value_type_name(element_type)));
  }
  return array;
}

}  // namespace infertune
