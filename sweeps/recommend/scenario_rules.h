#pragma once
// The scenarios' rules (recommend.h states them for the user): which measurement each compares (its
// basis), how a candidate is scored on it, and how the winner and runner-up are picked. Only candidates
// that pass the constraints take part; ties go to the candidate recorded first.
#include <optional>
#include <vector>

#include "sweeps/recommend/recommend.h"

namespace infertune {

inline constexpr int kLatencyMaxParallel = 4;           // latency: 1..4 parallel sequences
inline constexpr double kMixedLatencyAllowance = 0.25;  // mixed: latency within 25% of the best

// Throughput: the first of aggregate_tps, tg_tps, pp_tps that any eligible candidate measured, on the
// workload shape with that metric measured by the most eligible candidates.
std::optional<Basis> choose_throughput_basis(const std::vector<Candidate>& candidates);
// Latency: among eligible candidates with 1..4 sequences, the workload shape with TTFT or ITL measured by
// the most of them (a tie prefers a shape with both).
std::optional<Basis> choose_latency_basis(const std::vector<Candidate>& candidates);
// Serving: goodput_rps of the served load (kind serve) measured by the most eligible candidates; a tie goes to
// the load with the most clients. None when no candidate ran a served workload.
std::optional<Basis> choose_serving_basis(const std::vector<Candidate>& candidates);

// Fills throughput_tps, latency_ms and the displayed latency metrics of every candidate (excluded ones
// too, so the output can show them) on the bases.
void score_candidates(std::vector<Candidate>& candidates, const std::optional<Basis>& throughput,
                      const std::optional<Basis>& latency);

// Winner, runner-up, scores, margin and the rule in words; no_winner_reason when nothing qualifies. The
// command lines are left to the caller.
ScenarioRecommendation pick_scenario(Scenario scenario, const std::vector<Candidate>& candidates,
                                     const std::optional<Basis>& throughput, const std::optional<Basis>& latency,
                                     const std::optional<Basis>& serving = std::nullopt);

}  // namespace infertune
