// recommend_sweep: read the sweep, build and score the candidates, pick each scenario's winner, record it.
#include "sweeps/recommend/recommend.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "sweeps/recommend/candidates.h"
#include "sweeps/recommend/command_lines.h"
#include "sweeps/recommend/pareto_front.h"
#include "sweeps/recommend/scenario_rules.h"
#include "sweeps/recommend/serving_context.h"

namespace infertune {
namespace {

constexpr std::array kScenarioNames{"latency", "throughput", "mixed", "serving"};

Result<std::map<int64_t, std::string>> model_paths(ResultsStore& store) {
  auto query = store.database().prepare("SELECT id, path FROM models");
  if (!query) return query.error();
  std::map<int64_t, std::string> paths;
  for (;;) {
    auto row = query->step();
    if (!row) return row.error();
    if (!*row) return paths;
    paths[query->column_int(0)] = query->column_text(1);
  }
}

Result<std::optional<int64_t>> host_physical_cores(ResultsStore& store, int64_t host_id) {
  auto query = store.database().prepare("SELECT physical_cores FROM hosts WHERE id = ?");
  if (!query) return query.error();
  query->bind(1, host_id);
  auto row = query->step();
  if (!row) return row.error();
  if (!*row) return std::optional<int64_t>();
  return std::optional<int64_t>(query->column_int(0));
}

// A sweep measured by llama.cpp's tools (engine: llama.cpp) has llama.cpp's build row.
Result<bool> measured_by_llama_cpp(ResultsStore& store, int64_t build_id) {
  auto query = store.database().prepare("SELECT build_type FROM builds WHERE id = ?");
  if (!query) return query.error();
  query->bind(1, build_id);
  auto row = query->step();
  if (!row) return row.error();
  return *row && query->column_text(0) == "llama.cpp";
}

std::string why_no_candidates(const RecommendationReport& r) {
  if (r.n_trials == 0) return fmt::format("sweep {} has no trials", r.sweep_id);
  if (r.n_ok == 0) return fmt::format("sweep {} has no ok trials ({} recorded, none ok)", r.sweep_id, r.n_trials);
  if (r.candidates.empty()) return fmt::format("sweep {}: no ok trial has a workload in its config", r.sweep_id);
  return fmt::format(
      "sweep {}: every one of its {} configurations breaks a constraint (--max-mem, --max-quality-loss, --max-kld)",
      r.sweep_id, r.candidates.size());
}

Status store_recommendations(ResultsStore& store, const RecommendationReport& report) {
  for (const ScenarioRecommendation& s : report.scenarios) {
    const std::string details = scenario_json(report, s).dump();
    auto id = store.replace_recommendation(report.sweep_id, to_string(s.scenario), s.trial_id, details);
    if (!id) return id.error();
  }
  return {};
}

}  // namespace

std::string_view to_string(Scenario scenario) { return kScenarioNames[static_cast<size_t>(scenario)]; }

std::optional<Scenario> parse_scenario(std::string_view text) {
  for (size_t i = 0; i < kScenarioNames.size(); ++i) {
    if (text == kScenarioNames[i]) return static_cast<Scenario>(i);
  }
  return std::nullopt;
}

std::vector<Scenario> all_scenarios() { return {Scenario::latency, Scenario::throughput, Scenario::mixed}; }

bool RecommendationReport::has_quality() const {
  return std::ranges::any_of(candidates, [](const Candidate& c) { return c.quality.has_value(); });
}

bool RecommendationReport::has_recommendation() const {
  return std::ranges::any_of(scenarios, [](const ScenarioRecommendation& s) { return s.winner.has_value(); });
}

Result<RecommendationReport> recommend_sweep(ResultsStore& store, int64_t sweep_id, const RecommendOptions& options) {
  auto sweep = store.find_sweep(sweep_id);
  if (!sweep) return sweep.error();
  if (!*sweep) return fail("results store {}: no sweep {}", store.database().path().string(), sweep_id);
  auto trials = store.trials(sweep_id);
  if (!trials) return trials.error();
  auto paths = model_paths(store);
  if (!paths) return paths.error();
  auto cores = host_physical_cores(store, (*sweep)->host_id);
  if (!cores) return cores.error();
  auto quality = store.variant_quality(sweep_id);
  if (!quality) return quality.error();
  auto llama_cpp = measured_by_llama_cpp(store, (*sweep)->build_id);
  if (!llama_cpp) return llama_cpp.error();

  RecommendationReport report;
  report.sweep_id = sweep_id;
  report.measured_by_llama_cpp = *llama_cpp;
  report.options = options;
  if (report.options.scenarios.empty()) report.options.scenarios = all_scenarios();
  report.n_trials = trials->size();
  std::vector<StoredTrial> ok;
  for (StoredTrial& t : *trials) {
    if (t.trial.status == TrialStatus::ok) ok.push_back(std::move(t));
  }
  report.n_ok = ok.size();
  CandidateSet set = build_candidates(ok, *paths);
  report.n_unusable = set.n_unusable;
  report.candidates = std::move(set.candidates);
  assign_serving_contexts(report.candidates, report.options.min_ctx, gguf_model_shapes());
  apply_constraints(report.candidates, report.options);
  report.quality_notes = apply_quality(report.candidates, *quality, report.options);

  report.throughput_basis = choose_throughput_basis(report.candidates);
  report.latency_basis = choose_latency_basis(report.candidates);
  report.serving_basis = choose_serving_basis(report.candidates);
  if (options.scenarios.empty() && report.serving_basis) report.options.scenarios.push_back(Scenario::serving);
  score_candidates(report.candidates, report.throughput_basis, report.latency_basis);
  const bool any_eligible =
      std::ranges::any_of(report.candidates, [](const Candidate& c) { return c.excluded_reason.empty(); });
  if (!any_eligible) report.no_candidates_reason = why_no_candidates(report);
  for (Scenario scenario : report.options.scenarios) {
    ScenarioRecommendation s =
        pick_scenario(scenario, report.candidates, report.throughput_basis, report.latency_basis, report.serving_basis);
    if (s.winner) s.commands = command_lines(report.candidates[*s.winner], *cores, scenario == Scenario::serving);
    if (!any_eligible) s.no_winner_reason = report.no_candidates_reason;
    report.scenarios.push_back(std::move(s));
  }
  report.pareto_front = pareto_front(report.candidates);

  if (options.store_recommendations) {
    if (Status s = store_recommendations(store, report); !s) return s.error();
  }
  return report;
}

RecommendOptions recommend_options_for(const SweepSpec& spec) {
  RecommendOptions options;
  options.max_mem_bytes = spec.max_mem_bytes;
  options.min_ctx = spec.min_ctx;
  options.max_quality_loss_pct = spec.max_quality_loss_pct;
  options.max_kld = spec.max_kld;
  return options;
}

}  // namespace infertune
