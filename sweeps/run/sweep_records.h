#pragma once
// The rows the sweep runner writes, built from what it has in hand: a model file (its content hash and
// tensor type mix from the GGUF header), a trial the plan skipped, a trial a worker finished, and the spec
// as YAML text (what the sweeps table keeps, and what `--resume ID` reads back).
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/result.h"
#include "sweeps/plan/trial_plan.h"
#include "sweeps/run/group_execution.h"
#include "sweeps/spec/sweep_spec.h"
#include "sweeps/store/stable_hash.h"  // file_content_hash
#include "sweeps/store/store_records.h"

namespace infertune {

// Reads the GGUF header and hashes every byte of the file (the same bytes at another path are the same
// model). Errors name the file.
Result<ModelRecord> model_record(const std::string& path);

// A plan trial that does not run: status skipped, the plan's reason and its memory prediction.
TrialRecord skipped_trial_record(int64_t sweep_id, const PlannedTrial& trial, std::optional<int64_t> model_id);

// A trial a worker reported, with its samples, the plan's predicted and the measured peak RSS.
TrialRecord finished_trial_record(int64_t sweep_id, const TrialOutcome& outcome, std::optional<int64_t> model_id);

// The spec as YAML that parse_spec_yaml reads back to the same text: every key with its occurrences as
// given (lists and ranges unexpanded), then the workloads list.
std::string spec_text_yaml(const SpecText& text);

// A resolved spec (the built-in default sweep's) as the text that resolves to it again: every dimension and
// constraint, the workloads as a `workloads:` list. resolve_spec(spec_text_of(s)) has s's hash.
SpecText spec_text_of(const SweepSpec& spec);

}  // namespace infertune
