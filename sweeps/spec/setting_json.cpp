#include "sweeps/spec/setting_json.h"

#include <fmt/format.h>

#include <cctype>

namespace infertune {

nlohmann::json setting_json(const Setting& setting, std::string_view canonical) {
  switch (setting.kind) {
    case ValueKind::Integer:
      // A word an integer setting accepts (-ngl auto) stays a string.
      if (canonical.empty() || std::isalpha(static_cast<unsigned char>(canonical.front()))) break;
      return std::stoll(std::string(canonical));
    case ValueKind::Boolean:
      return canonical == "1";
    case ValueKind::Word:
      break;
  }
  return std::string(canonical);
}

Result<std::string> setting_json_text(const Setting& setting, const nlohmann::json& value) {
  switch (setting.kind) {
    case ValueKind::Integer:
      if (value.is_string() && setting.parse(value.get<std::string>(), setting.config_key)) {
        return value.get<std::string>();  // a word the setting takes, as -ngl auto
      }
      if (!value.is_number_integer()) return fail("expected an integer, got {}", value.dump());
      return value.dump();
    case ValueKind::Boolean:
      if (!value.is_boolean()) return fail("expected true or false, got {}", value.dump());
      return std::string(value.get<bool>() ? "1" : "0");
    case ValueKind::Word:
      break;
  }
  if (!value.is_string()) return fail("expected a string, got {}", value.dump());
  return value.get<std::string>();
}

}  // namespace infertune
