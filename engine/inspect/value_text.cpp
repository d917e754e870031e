#include "engine/inspect/value_text.h"

#include <fmt/format.h>

#include <type_traits>

namespace infertune {
namespace {

std::string quoted(const std::string& s, size_t max_chars = 120) {
  nlohmann::json j = s.size() > max_chars ? s.substr(0, max_chars) + "..." : s;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

template <class T>
std::string scalar_text(const T& v) {
  if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
  else if constexpr (std::is_same_v<T, GgufBool>) return v.value ? "true" : "false";
  else if constexpr (std::is_same_v<T, std::string>) return quoted(v);
  else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) return fmt::format("{}", int(v));
  else return fmt::format("{}", v);
}

template <class T>
nlohmann::json scalar_json(const T& v) {
  if constexpr (std::is_same_v<T, GgufBool>) return v.value;
  else if constexpr (std::is_same_v<T, std::string>) {
    return nlohmann::json::parse(quoted(v, v.size()), nullptr, false);  // invalid UTF-8 replaced
  } else return v;
}

std::string array_text(const GgufArray& array, size_t max_items);
nlohmann::json array_json(const GgufArray& array, size_t max_items);

}  // namespace

std::string value_to_text(const GgufValue& value, size_t max_array_items) {
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, GgufArray>) return array_text(v, max_array_items);
        else return scalar_text(v);
      },
      value.storage);
}

nlohmann::json value_to_json(const GgufValue& value, size_t max_array_items) {
  return std::visit(
      [&](const auto& v) -> nlohmann::json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, GgufArray>) return array_json(v, max_array_items);
        else return scalar_json(v);
      },
      value.storage);
}

namespace {

std::string array_text(const GgufArray& array, size_t max_items) {
  return std::visit(
      [&](const auto& items) {
        std::string out = "[";
        const size_t shown = std::min(items.size(), max_items);
        for (size_t i = 0; i < shown; ++i) {
          if (i) out += ", ";
          using T = typename std::decay_t<decltype(items)>::value_type;
          if constexpr (std::is_same_v<T, GgufArray>) out += array_text(items[i], max_items);
          else out += scalar_text(items[i]);
        }
        if (shown < items.size()) out += fmt::format(", ... ({} total)", items.size());
        return out + "]";
      },
      array.elements);
}

nlohmann::json array_json(const GgufArray& array, size_t max_items) {
  nlohmann::json head = nlohmann::json::array();
  std::visit(
      [&](const auto& items) {
        const size_t shown = std::min(items.size(), max_items);
        for (size_t i = 0; i < shown; ++i) {
          using T = typename std::decay_t<decltype(items)>::value_type;
          if constexpr (std::is_same_v<T, GgufArray>) head.push_back(array_json(items[i], max_items));
          else head.push_back(scalar_json(items[i]));
        }
      },
      array.elements);
  return {{"type", "array"},
          {"element_type", std::string(gguf_value_type_name(array.element_type()))},
          {"count", array.size()},
          {"head", std::move(head)}};
}

}  // namespace
}  // namespace infertune
