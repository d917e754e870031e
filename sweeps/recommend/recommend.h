#pragma once
// Recommendations (DESIGN.md, "Data flow": recommend): from the ok trials of one sweep, the configuration to
// run for each scenario, under the user's memory and context constraints, with the evidence that it is
// better than the runner-up, the Pareto front of throughput, latency and memory, and ready command lines.
//
// A recommendation is a configuration, not a trial: the trials of one sweep that differ only in their
// workload are one Candidate (trials that differ only in the context each workload needed, -c 0, are
// merged too; the candidate's -c is the largest). Candidates are compared like with like: each scenario
// compares one measurement of one workload shape (kind, prompt, generated tokens, depth; any -np), the
// "basis", chosen as the one that the most eligible candidates measured.
//
// Quality: when the sweep measured its quantization variants against the base (perplexity, KL divergence),
// each candidate carries its variant's figures, shown in the text and the JSON; --max-quality-loss and
// --max-kld exclude the variants beyond the budget, each with its reason.
//
// Scenarios (the rules the output states, see scenario_rules.h):
//  - latency: candidates with 1..4 parallel sequences; score = modelled time of one streamed reply of the
//    basis workload: mean TTFT + (n_gen - 1) x mean ITL, lower is better.
//  - throughput: any parallelism; score = mean aggregate_tps of a batched workload, else tg_tps, else
//    pp_tps; higher is better.
//  - mixed: the highest throughput among candidates whose latency score is within 25% of the best latency
//    score of any candidate (a serving team's "as fast as possible without hurting interactive users").
//  - serving (when the sweep ran served workloads, --serve): the most goodput_rps (requests per second that met
//    the workload's objective, through the real server and its clients) on the served load with the most
//    clients; its command lines start servers (`infertune serve`, `llama-server`).
// Margin over the runner-up: the winner's score relative to the runner-up's, within noise when their 95%
// confidence intervals (Student t, from the metric summaries) overlap.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"
#include "sweeps/plan/memory_model.h"
#include "sweeps/spec/sweep_spec.h"
#include "sweeps/store/results_store.h"

namespace infertune {

enum class Scenario { latency, throughput, mixed, serving };

std::string_view to_string(Scenario scenario);
std::optional<Scenario> parse_scenario(std::string_view text);
std::vector<Scenario> all_scenarios();

struct RecommendOptions {
  std::vector<Scenario> scenarios;  // empty: all (serving only where the sweep ran served workloads)
  std::optional<uint64_t>
      max_mem_bytes;  // exclude candidates whose peak RSS (larger of predicted, measured) exceeds it
  // The context the command lines run with, at least (serving_context.h): a smaller candidate's -c is raised to it
  // and its memory predicted there; 0: 4096, or the model's training context when smaller.
  int64_t min_ctx = 0;
  // Quality budgets (quantization variants measured against the sweep's base, sweeps/quality): exclude
  // candidates whose perplexity is more than this many percent above the base's, or whose mean KL divergence
  // from the base exceeds this. Candidates without figures (model files used as given, synthetic variants,
  // a failed measurement) are not excluded; the report says why the budget was not applied to them.
  std::optional<double> max_quality_loss_pct;
  std::optional<double> max_kld;
  bool store_recommendations = true;  // write to the recommendations table, replacing the sweep's earlier ones
};

// A mean (or a value derived from means) with the half-width of its 95% confidence interval; no interval
// when a part of it was measured once.
struct Estimate {
  double value = 0;
  std::optional<double> ci95_half_width;
};

// One trial of a candidate: its workload and metric summaries.
struct WorkloadResult {
  int64_t trial_id = 0;
  std::string workload;                          // "pp512", "batched np4 pp128+tg64" (as Workload::name())
  nlohmann::json workload_json;                  // the trial config's "workload" object
  std::map<std::string, SampleSummary> metrics;  // by metric_names.h name
};

struct Candidate {
  nlohmann::json config;   // the trials' config without "workload"; n_ctx the largest of the merged trials
  std::string model_path;  // from the models table, else the config's "model"
  std::vector<WorkloadResult> workloads;
  std::optional<int64_t> peak_rss_bytes;  // the largest predicted or measured peak RSS of its trials
  // The context its command lines run with and what that context costs when full (serving_context.h); no
  // memory when the model file cannot be read here (command_memory_note says why).
  int64_t command_ctx = 0;
  std::optional<MemoryPrediction> command_memory;
  std::string command_memory_note;
  std::string excluded_reason;      // empty: passes the constraints
  std::optional<int64_t> model_id;  // the trials' model row
  // The variant's quality against the sweep's base (its variant_quality row), when the sweep has one for it;
  // quality_note says why a quality budget did not apply to the candidate.
  std::optional<VariantQualityRecord> quality;
  std::string quality_note;
  // Scores on the report's bases (absent when the candidate did not measure the basis workload/metric).
  std::optional<Estimate> throughput_tps;
  std::optional<Estimate> latency_ms;
  std::optional<double> ttft_ms, itl_p50_ms, itl_p95_ms;  // of the latency basis workload, for display
  int n_parallel() const;
  int64_t n_ctx() const;
};

// What a scenario compares.
struct Basis {
  std::string metric;       // "aggregate_tps", "tg_tps", "pp_tps", "goodput_rps", or "latency" (TTFT + gaps x ITL)
  nlohmann::json workload;  // {"kind", "n_prompt", "n_gen", "depth"}: the shape, any n_parallel
  std::string description;  // "aggregate_tps of batched pp128+tg64 (any -np)"
  // Latency only: which parts the score adds up (those the basis workload measured) and the number of gaps
  // between the tokens of one reply (n_gen - 1).
  bool with_ttft = false;
  bool with_itl = false;
  int itl_gaps = 0;
};

struct Margin {
  double percent = 0;                       // how much better the winner's score is than the runner-up's
  std::optional<bool> within_noise;         // none: a score has no interval (one repetition)
  std::optional<double> winner_ci_percent;  // CI half-width / score x 100
  std::optional<double> runner_up_ci_percent;
  std::string text() const;  // "margin 7.3% (outside noise)", "margin 1.2% (within noise: ±2.1% / ±1.8%)"
};

struct CommandLines {
  std::string infertune;           // `infertune run ...`, or `infertune serve ... -np N` for a server
  std::string llama_cpp;           // `llama-cli ...`, or `llama-server ... -np N` for parallel sequences
  std::vector<std::string> notes;  // what a command cannot express (e.g. -np in infertune run)
};

struct ScenarioRecommendation {
  Scenario scenario = Scenario::latency;
  std::string rule;  // how the winner was chosen, in words
  std::optional<Basis> basis;
  std::optional<size_t> winner;     // index into RecommendationReport::candidates
  std::optional<size_t> runner_up;  // index into RecommendationReport::candidates
  std::optional<int64_t> trial_id;  // the winner's trial of the basis workload
  std::optional<Estimate> winner_score, runner_up_score;
  std::string score_unit;  // "tokens/s", "ms" or "requests/s"
  std::optional<Margin> margin;
  CommandLines commands;
  std::string no_winner_reason;  // set when there is no winner
};

struct RecommendationReport {
  int64_t sweep_id = 0;
  RecommendOptions options;
  bool measured_by_llama_cpp = false;  // engine: llama.cpp: its command lines are the ones measured, so they lead
  size_t n_trials = 0;                 // of the sweep, any status
  size_t n_ok = 0;
  size_t n_unusable = 0;              // ok trials whose config has no workload (left out)
  std::vector<Candidate> candidates;  // every configuration of the ok trials, excluded ones included
  std::optional<Basis> throughput_basis, latency_basis, serving_basis;
  std::vector<ScenarioRecommendation> scenarios;  // in the order of options.scenarios
  std::vector<size_t> pareto_front;               // indices of the non-dominated eligible candidates
  std::string no_candidates_reason;        // set when no candidate passes (empty sweep, only failures, constraints)
  std::vector<std::string> quality_notes;  // why quality figures are absent or a budget did not apply, per cause
  bool has_quality() const;                // some candidate has a variant_quality row
  bool has_recommendation() const;
};

// Reads the sweep's trials, builds and scores the candidates, picks the winners, and (unless
// options.store_recommendations is false) records one row per scenario in the recommendations table,
// replacing the rows of an earlier run for the same sweep and scenario. Errors only for an unknown sweep or
// a store error; a sweep without usable trials is a report with no_candidates_reason.
Result<RecommendationReport> recommend_sweep(ResultsStore& store, int64_t sweep_id, const RecommendOptions& options);

// The options a sweep's spec asks its recommendation for: its constraints (max_mem, min_ctx) and quality budget.
RecommendOptions recommend_options_for(const SweepSpec& spec);

// The table a person reads: per scenario the rule, the configuration, its main metrics, peak RSS, the
// margin and the command lines; then the Pareto front.
std::string format_recommendation_text(const RecommendationReport& report);

// The JSON document (`--json FILE`, `-o json`); its "scenarios" members are what the recommendations table's
// details column holds.
nlohmann::json recommendation_json(const RecommendationReport& report);
nlohmann::json scenario_json(const RecommendationReport& report, const ScenarioRecommendation& scenario);

}  // namespace infertune
