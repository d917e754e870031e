#pragma once
// Candidates: the configurations a recommendation chooses between, built from a sweep's ok trials. The
// trials of one configuration that differ only in their workload are one candidate; those that also differ
// in the context size, each workload having been given just the context it needs (-c 0), are merged into
// one candidate whose -c is the largest (it fits every workload). Trials whose config is not an object with
// a "workload" object are left out (counted by the caller).
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "sweeps/recommend/recommend.h"

namespace infertune {

struct CandidateSet {
  std::vector<Candidate> candidates;  // in the order their first trial was recorded
  size_t n_unusable = 0;              // ok trials whose config has no workload
};

// `model_paths`: the models table's path by id (a trial's model_id).
CandidateSet build_candidates(const std::vector<StoredTrial>& ok_trials,
                              const std::map<int64_t, std::string>& model_paths);

// The workload's shape, what candidates are compared on: kind, n_prompt, n_gen, depth (not n_parallel,
// which belongs to the configuration).
nlohmann::json workload_shape(const nlohmann::json& workload);
std::string describe_shape(const nlohmann::json& shape);  // "pp128+tg64", "batched pp128+tg64", "tg128@d512"

// The candidate's result for a workload shape, or null.
const WorkloadResult* find_workload(const Candidate& candidate, const nlohmann::json& shape);

// Sets excluded_reason on the candidates that break --max-mem or --min-ctx.
void apply_constraints(std::vector<Candidate>& candidates, const RecommendOptions& options);

// Gives each candidate its variant's quality row (by model id) and applies --max-quality-loss / --max-kld:
// excluded_reason on the variants beyond the budget, quality_note on those it cannot judge. Returns one
// line per reason a budget was not applied (or figures are missing), for the report.
std::vector<std::string> apply_quality(std::vector<Candidate>& candidates,
                                       const std::vector<VariantQualityRecord>& quality,
                                       const RecommendOptions& options);

// "--max-quality-loss 1%", "--max-kld 0.05", joined with ", "; empty without a budget.
std::string quality_budget_text(const RecommendOptions& options);

std::string human_bytes(int64_t bytes);  // "1.50 GiB", "300.0 MiB"

// A config field read without throwing: the fallback when it is absent or of another type (a config
// edited by hand must not crash the recommender).
int64_t config_int(const nlohmann::json& object, const char* key, int64_t fallback);
std::string config_text(const nlohmann::json& object, const char* key, const std::string& fallback = "");

}  // namespace infertune
