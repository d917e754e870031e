#include "engine/server/json_fields.h"

#include <cmath>
#include <limits>

namespace infertune {

using nlohmann::json;

namespace {

struct TooDeep {};

}  // namespace

Result<json> parse_request_body(std::string_view body) {
  // The parser itself is iterative; the callback stops it at the first value opened too deep.
  const json::parser_callback_t bound_depth = [](int depth, json::parse_event_t event, json&) {
    if (depth > kMaxJsonDepth &&
        (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start)) {
      throw TooDeep{};
    }
    return true;
  };
  try {
    json parsed = json::parse(body, bound_depth);
    if (!parsed.is_object()) return fail("the request body must be a JSON object");
    return parsed;
  } catch (const TooDeep&) {
    return fail("the body nests deeper than {} levels", kMaxJsonDepth);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number beyond a double (1e400)
    return fail("the body is not valid JSON: {}", e.what());
  }
}

std::string shown(const json& value) {
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return value.dump(-1, ' ', false, json::error_handler_t::replace);  // a string of invalid UTF-8 too
}

Result<float> number_field(const json& body, const char* name, float fallback, double low, double high) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_number()) return fail("{} must be a number in [{}, {}], got {}", name, low, high, shown(*it));
  const double v = it->get<double>();
  if (!(v >= low && v <= high)) return fail("{} must be a number in [{}, {}], got {}", name, low, high, shown(*it));
  return static_cast<float>(v);
}

Result<std::optional<int64_t>> integer_field(const json& body, const char* name, int64_t low, int64_t high) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::optional<int64_t>();
  // The value as an int64, compared exactly: an unsigned above INT64_MAX or a float outside [-2^63, 2^63)
  // has none (converting it would wrap, or for a float be undefined).
  std::optional<int64_t> v;
  if (it->is_number_unsigned()) {
    if (it->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) v = it->get<int64_t>();
  } else if (it->is_number_integer()) {
    v = it->get<int64_t>();
  } else if (it->is_number_float()) {
    const double d = it->get<double>();
    if (std::floor(d) == d && d >= -0x1p63 && d < 0x1p63) v = static_cast<int64_t>(d);
  }
  if (!v || *v < low || *v > high) {
    return fail("{} must be an integer in [{}, {}], got {}", name, low, high, shown(*it));
  }
  return v;
}

Result<bool> bool_field(const json& body, const char* name, bool fallback) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) return fail("{} must be true or false, got {}", name, shown(*it));
  return it->get<bool>();
}

}  // namespace infertune
