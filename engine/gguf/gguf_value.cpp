#include "engine/gguf/gguf_value.h"

#include <array>

namespace infertune {

std::string_view gguf_value_type_name(GgufValueType type) {
  static constexpr std::array<std::string_view, kGgufValueTypeCount> kNames = {
      "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"};
  const auto id = static_cast<uint32_t>(type);
  return id < kNames.size() ? kNames[id] : std::string_view("invalid");
}

size_t GgufArray::size() const {
  return std::visit([](const auto& values) { return values.size(); }, elements);
}

}  // namespace infertune
