#pragma once
// Reading a request's JSON body as the server's routes do: the body parsed with a bound on its nesting, and
// typed, bounded fields whose errors name the field and show the value ("temperature must be a number in
// [0, 2], got 7"). A route answers an error with 400.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/result.h"

namespace infertune {

// Deeper bodies are refused: no request the server reads nests past a few levels, and a value nested
// 100k deep would cost a recursion per level wherever it is copied or printed.
inline constexpr int kMaxJsonDepth = 64;

// The body as a JSON object; an error for invalid JSON, a number beyond a double, nesting deeper than
// kMaxJsonDepth, or a body that is not an object.
Result<nlohmann::json> parse_request_body(std::string_view body);

// A value as an error message shows it: a scalar as JSON, an array or object by its kind only (printing
// it would recurse once per level of nesting).
std::string shown(const nlohmann::json& value);

// A number field in [low, high], or `fallback` when absent or null.
Result<float> number_field(const nlohmann::json& body, const char* name, float fallback, double low, double high);

// An integer field in [low, high], compared exactly (an integer beyond int64 or a float that is no integer
// is refused, never wrapped); absent or null: nullopt.
Result<std::optional<int64_t>> integer_field(const nlohmann::json& body, const char* name, int64_t low, int64_t high);

// A boolean field, or `fallback` when absent or null.
Result<bool> bool_field(const nlohmann::json& body, const char* name, bool fallback);

}  // namespace infertune
