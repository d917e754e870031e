#pragma once
// The dry-run view of a sweep plan: per reload group a header and one line per trial (its settings,
// workload, predicted memory and, for a skipped one, the reason), then a summary.
#include <string>

#include "sweeps/plan/trial_plan.h"
#include "sweeps/spec/sweep_spec.h"

namespace infertune {

std::string format_plan(const SweepSpec& spec, const SweepPlan& plan);

// The plan as JSON: the spec hash, the groups and every trial with its config, hash, memory and skip reason.
nlohmann::json plan_to_json(const SweepPlan& plan);

}  // namespace infertune
