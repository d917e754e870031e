#pragma once
// GGUF metadata values. Every value keeps the exact type it was stored with, so that a file read and
// written again is byte-identical. The variant index of GgufValue::Storage (and of GgufArray::Elements)
// equals the GGUF value-type id, which keeps the mapping in one place.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace infertune {

enum class GgufValueType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};
inline constexpr uint32_t kGgufValueTypeCount = 13;

std::string_view gguf_value_type_name(GgufValueType type);  // "u32", "string", "array", ...

// A bool array element; a distinct type so that std::vector<bool>'s bit packing is avoided.
struct GgufBool {
  bool value = false;
  bool operator==(const GgufBool&) const = default;
};

struct GgufArray {
  using Elements =
      std::variant<std::vector<uint8_t>, std::vector<int8_t>, std::vector<uint16_t>, std::vector<int16_t>,
                   std::vector<uint32_t>, std::vector<int32_t>, std::vector<float>, std::vector<GgufBool>,
                   std::vector<std::string>, std::vector<GgufArray>, std::vector<uint64_t>, std::vector<int64_t>,
                   std::vector<double>>;
  Elements elements;

  GgufValueType element_type() const { return static_cast<GgufValueType>(elements.index()); }
  size_t size() const;
  bool operator==(const GgufArray&) const = default;
};

struct GgufValue {
  using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool, std::string,
                               GgufArray, uint64_t, int64_t, double>;
  Storage storage;

  GgufValueType type() const { return static_cast<GgufValueType>(storage.index()); }
  bool operator==(const GgufValue&) const = default;
};

struct GgufKeyValue {
  std::string key;
  GgufValue value;
  bool operator==(const GgufKeyValue&) const = default;
};

}  // namespace infertune
