#pragma once
// The sweep's settings as the fields of a stored trial configuration (PlannedTrial::config,
// sweeps/plan/trial_plan.h): one field per setting the sweep takes (settings_table.h), named by its
// config_key ("n_ctx", "type_k") and valued as setting_json spells it. The planner writes them from the
// EngineSettings a trial runs with; the trial executor and the recommender read them back. All of it comes
// from the table, so a knob added there is swept, stored, run and recommended without a change here.
#include <nlohmann/json.hpp>

#include "engine/settings/engine_settings.h"
#include "engine/settings/setting.h"
#include "kernels/result.h"

namespace infertune {

// Every setting of the table at its default_value (those the sweep does not take too: --poll, --prio).
EngineSettings default_engine_settings();

// {config_key: value} of one setting, and of every setting the sweep takes (those added after schema v2 only
// when not at their default, Setting::stored_when_default, so that adding one changes no stored hash).
nlohmann::json config_field(const Setting& setting, const EngineSettings& settings);
nlohmann::json config_fields(const EngineSettings& settings);

// Every sweep setting's field must be present and valid: a config the planner wrote. Errors name the field,
// "config field 'n_ubatch': 0 is out of range; allowed: 1..16777216". Other fields are not looked at.
Result<EngineSettings> read_config_fields(const nlohmann::json& config);

// For configs written by other versions or edited by hand (the recommender reads any store): a field that is
// absent or not valid keeps the setting's default.
EngineSettings read_config_fields_or_defaults(const nlohmann::json& config);

}  // namespace infertune
