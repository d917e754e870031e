// The recommendation as a JSON document (recommend.h): what --json and -o json write, and per scenario the
// details column of the recommendations table. Absent values are null.
#include <nlohmann/json.hpp>

#include "sweeps/recommend/recommend.h"

namespace infertune {
namespace {

template <class T>
nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json estimate_json(const std::optional<Estimate>& e) {
  if (!e) return nullptr;
  return {{"value", e->value}, {"ci95_half_width", or_null(e->ci95_half_width)}};
}

nlohmann::json basis_json(const std::optional<Basis>& b) {
  if (!b) return nullptr;
  nlohmann::json j{{"metric", b->metric}, {"workload", b->workload}, {"description", b->description}};
  if (b->metric == "latency") {
    j["with_ttft"] = b->with_ttft;
    j["with_itl"] = b->with_itl;
    j["itl_gaps"] = b->itl_gaps;
  }
  return j;
}

// The variant's quality against the sweep's base, null when the sweep recorded none for it.
nlohmann::json quality_json(const Candidate& c) {
  if (!c.quality) return nullptr;
  const VariantQualityRecord& q = *c.quality;
  return {{"status", to_string(q.status)},
          {"reason", q.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(q.reason)},
          {"quant", q.quant},
          {"corpus", q.corpus.empty() ? nlohmann::json(nullptr) : nlohmann::json(q.corpus)},
          {"n_ctx", or_null(q.n_ctx)},
          {"n_chunks", or_null(q.n_chunks)},
          {"positions", or_null(q.positions)},
          {"ppl", or_null(q.ppl)},
          {"ppl_error", or_null(q.ppl_error)},
          {"base_ppl", or_null(q.base_ppl)},
          {"ppl_increase_pct", or_null(q.ppl_increase_pct())},
          {"kld_mean", or_null(q.kld_mean)},
          {"kld_error", or_null(q.kld_error)},
          {"kld_p99", or_null(q.kld_p99)},
          {"kld_max", or_null(q.kld_max)},
          {"same_top", or_null(q.same_top)}};
}

// What the command lines' context costs when full, or why it is not predicted.
nlohmann::json command_memory_json(const Candidate& c) {
  if (!c.command_memory) return {{"note", c.command_memory_note}};
  const MemoryPrediction& m = *c.command_memory;
  return {{"total_bytes", m.total()}, {"weights_bytes", m.weights}, {"kv_bytes", m.kv}, {"compute_bytes", m.compute}};
}

nlohmann::json candidate_json(const RecommendationReport& report, std::optional<size_t> index) {
  if (!index || *index >= report.candidates.size()) return nullptr;
  const Candidate& c = report.candidates[*index];
  nlohmann::json workloads = nlohmann::json::array();
  for (const WorkloadResult& w : c.workloads) workloads.push_back({{"name", w.workload}, {"trial_id", w.trial_id}});
  return {{"candidate", *index},
          {"model", c.model_path},
          {"config", c.config},
          {"n_parallel", c.n_parallel()},
          {"n_ctx", c.n_ctx()},
          {"peak_rss_bytes", or_null(c.peak_rss_bytes)},
          {"command_ctx", c.command_ctx},
          {"command_memory", command_memory_json(c)},
          {"excluded_reason", c.excluded_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.excluded_reason)},
          {"workloads", workloads},
          {"throughput_tps", estimate_json(c.throughput_tps)},
          {"latency_ms", estimate_json(c.latency_ms)},
          {"ttft_ms", or_null(c.ttft_ms)},
          {"itl_p50_ms", or_null(c.itl_p50_ms)},
          {"itl_p95_ms", or_null(c.itl_p95_ms)},
          {"quality", quality_json(c)},
          {"quality_note", c.quality_note.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.quality_note)}};
}

nlohmann::json margin_json(const std::optional<Margin>& m) {
  if (!m) return nullptr;
  return {{"percent", m->percent},
          {"within_noise", or_null(m->within_noise)},
          {"winner_ci_percent", or_null(m->winner_ci_percent)},
          {"runner_up_ci_percent", or_null(m->runner_up_ci_percent)},
          {"noise_rule", "within noise when the 95% confidence intervals (Student t) of the two scores overlap"},
          {"text", m->text()}};
}

}  // namespace

nlohmann::json scenario_json(const RecommendationReport& report, const ScenarioRecommendation& s) {
  nlohmann::json commands = nullptr;
  if (s.winner) {
    commands = {{"infertune", s.commands.infertune}, {"llama_cpp", s.commands.llama_cpp}, {"notes", s.commands.notes}};
  }
  return {
      {"scenario", to_string(s.scenario)},
      {"sweep_id", report.sweep_id},
      {"rule", s.rule},
      {"basis", basis_json(s.basis)},
      {"score_unit", s.score_unit},
      {"trial_id", or_null(s.trial_id)},
      {"winner", candidate_json(report, s.winner)},
      {"winner_score", estimate_json(s.winner_score)},
      {"runner_up", candidate_json(report, s.runner_up)},
      {"runner_up_score", estimate_json(s.runner_up_score)},
      {"margin", margin_json(s.margin)},
      {"commands", commands},
      {"no_winner_reason", s.no_winner_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.no_winner_reason)}};
}

nlohmann::json recommendation_json(const RecommendationReport& report) {
  nlohmann::json scenarios = nlohmann::json::object();
  for (const ScenarioRecommendation& s : report.scenarios)
    scenarios[std::string(to_string(s.scenario))] = scenario_json(report, s);
  nlohmann::json front = nlohmann::json::array();
  for (size_t i : report.pareto_front) front.push_back(candidate_json(report, i));
  nlohmann::json candidates = nlohmann::json::array();
  for (size_t i = 0; i < report.candidates.size(); ++i) candidates.push_back(candidate_json(report, i));
  return {
      {"format", "infertune-recommendation"},
      {"version", 1},
      {"sweep_id", report.sweep_id},
      {"measured_by", report.measured_by_llama_cpp ? "llama.cpp" : "infertune"},
      {"constraints",
       {{"max_mem_bytes", or_null(report.options.max_mem_bytes)},
        {"min_ctx", report.options.min_ctx},
        {"max_quality_loss_pct", or_null(report.options.max_quality_loss_pct)},
        {"max_kld", or_null(report.options.max_kld)}}},
      {"quality_notes", report.quality_notes},
      {"trials", {{"total", report.n_trials}, {"ok", report.n_ok}, {"unusable", report.n_unusable}}},
      {"no_candidates_reason",
       report.no_candidates_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.no_candidates_reason)},
      {"bases", {{"throughput", basis_json(report.throughput_basis)}, {"latency", basis_json(report.latency_basis)}}},
      {"scenarios", scenarios},
      {"pareto_front", front},
      {"candidates", candidates}};
}

}  // namespace infertune
