#pragma once
// A planned trial's configuration (PlannedTrial::config, written by sweeps/plan/trial_plan.cpp) read back
// into what the executor runs it with: the EngineSettings of its setting fields (read as the settings table
// says, sweeps/spec/config_fields.h) and its workload. The model and quant fields belong to the worker that
// loaded the model and are not read here (nor is mmap used: the model is loaded already). Errors name the
// field: "config field 'n_ubatch': ...".
#include <nlohmann/json.hpp>

#include "engine/settings/engine_settings.h"
#include "kernels/result.h"
#include "sweeps/spec/sweep_spec.h"

namespace infertune {

struct TrialConfig {
  EngineSettings settings;  // every setting the sweep takes from its field, the others at their defaults
  Workload workload;
};

Result<TrialConfig> parse_trial_config(const nlohmann::json& config);

// The workload object of a config ({kind: pp|tg|pp+tg|batched, n_prompt, n_gen, depth, n_parallel}); errors
// name "workload.<field>" and say what the kind needs (a pp workload needs n_prompt > 0, ...).
Result<Workload> parse_workload(const nlohmann::json& workload);

}  // namespace infertune
