#pragma once
// A setting's canonical value (engine/settings/setting.h) as JSON: the one spelling of the sweep's stored
// documents, the spec's canonical form (its hash, sweep_spec.h) and the trial configs (theirs,
// config_fields.h). Integers are JSON numbers, 0/1 settings JSON booleans, words JSON strings: the types
// the sweep wrote before its settings came from the table, so that stored hashes keep matching.
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "engine/settings/setting.h"
#include "kernels/result.h"

namespace infertune {

// `canonical` is a value Setting::parse returned.
nlohmann::json setting_json(const Setting& setting, std::string_view canonical);

// The JSON as text for Setting::parse: an integer for an Integer setting, true/false for a Boolean one, a
// string for a Word. Another JSON type is an error saying what was expected (the caller names the field).
Result<std::string> setting_json_text(const Setting& setting, const nlohmann::json& value);

}  // namespace infertune
