#include "sweeps/spec/config_fields.h"

#include <fmt/format.h>

#include <string>

#include "engine/settings/settings_table.h"
#include "sweeps/spec/setting_json.h"

namespace infertune {
namespace {

// The canonical value of `setting` in `config`; errors name the field. A setting added to the sweep after
// schema v2 is stored only when set (Setting::stored_when_default), so its absence means its default.
Result<std::string> field_value(const Setting& setting, const nlohmann::json& config) {
  const std::string where = fmt::format("config field '{}'", setting.config_key);
  auto it = config.find(setting.config_key);
  if (it == config.end() && !setting.stored_when_default) return std::string(setting.default_value);
  if (it == config.end()) return fail("{} is missing", where);
  auto text = setting_json_text(setting, *it);
  if (!text) return fail("{}: {}", where, text.error().message);
  return setting.parse(*text, where);
}

}  // namespace

EngineSettings default_engine_settings() {
  EngineSettings settings;
  for (const Setting& s : all_settings()) s.apply(s.default_value, settings);
  return settings;
}

nlohmann::json config_field(const Setting& setting, const EngineSettings& settings) {
  return {{std::string(setting.config_key), setting_json(setting, setting.read(settings))}};
}

nlohmann::json config_fields(const EngineSettings& settings) {
  nlohmann::json fields = nlohmann::json::object();
  for (const Setting* s : settings_of(Command::sweep)) {
    if (!s->stored_when_default && s->read(settings) == s->default_value) continue;  // keeps old hashes
    fields.update(config_field(*s, settings));
  }
  return fields;
}

Result<EngineSettings> read_config_fields(const nlohmann::json& config) {
  if (!config.is_object()) return fail("trial config: expected a JSON object, got {}", config.dump());
  EngineSettings settings = default_engine_settings();
  for (const Setting* s : settings_of(Command::sweep)) {
    auto value = field_value(*s, config);
    if (!value) return value.error();
    s->apply(*value, settings);
  }
  return settings;
}

EngineSettings read_config_fields_or_defaults(const nlohmann::json& config) {
  EngineSettings settings = default_engine_settings();
  if (!config.is_object()) return settings;
  for (const Setting* s : settings_of(Command::sweep)) {
    if (auto value = field_value(*s, config)) s->apply(*value, settings);
  }
  return settings;
}

}  // namespace infertune
