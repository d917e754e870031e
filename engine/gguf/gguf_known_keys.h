#pragma once
// The value types that llama.cpp expects for the metadata keys it interprets. A file whose known key
// has another type would be refused (or misread) by llama.cpp, so the reader refuses it up front and
// the writer never produces one. Keys not in the table may hold any type.
#include <optional>
#include <string>
#include <string_view>

#include "engine/gguf/gguf_value.h"
#include "kernels/result.h"

namespace infertune {

inline constexpr std::string_view kGgufAlignmentKey = "general.alignment";

// What is wrong with `value` as the value of `key` ("must be an array of f32, not an array of i32"),
// or nullopt when it fits (or the key has no fixed type).
std::optional<std::string> check_known_key(std::string_view key, const GgufValue& value);

// The alignment a general.alignment value sets: a u32 that is a nonzero power of two and at most
// kGgufMaxAlignment; otherwise an error saying which condition fails.
Result<uint64_t> gguf_alignment_from_value(const GgufValue& value);

// "u32", "string", "array of f32", "array of array".
std::string describe_value_type(const GgufValue& value);

}  // namespace infertune
