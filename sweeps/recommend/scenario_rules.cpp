#include "sweeps/recommend/scenario_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "sweeps/recommend/candidates.h"
#include "sweeps/recommend/noise_margin.h"
#include "sweeps/store/metric_names.h"

namespace infertune {
namespace {

bool eligible(const Candidate& c) { return c.excluded_reason.empty(); }

bool latency_parallelism(const Candidate& c) { return c.n_parallel() >= 1 && c.n_parallel() <= kLatencyMaxParallel; }

const SampleSummary* metric_of(const WorkloadResult& w, const char* metric) {
  auto it = w.metrics.find(metric);
  return it == w.metrics.end() ? nullptr : &it->second;
}

// Per workload shape (in first-seen order): how many candidates measured it with `has`.
struct ShapeCount {
  nlohmann::json shape;
  int count = 0;
  bool preferred = false;  // the tie-break
};

std::vector<ShapeCount> count_shapes(const std::vector<Candidate>& candidates,
                                     const std::function<bool(const Candidate&)>& takes_part,
                                     const std::function<bool(const WorkloadResult&)>& has,
                                     const std::function<bool(const WorkloadResult&)>& preferred) {
  std::vector<ShapeCount> counts;
  for (const Candidate& c : candidates) {
    if (!eligible(c) || !takes_part(c)) continue;
    for (const WorkloadResult& w : c.workloads) {
      if (!has(w)) continue;
      const nlohmann::json shape = workload_shape(w.workload_json);
      auto it = std::ranges::find_if(counts, [&](const ShapeCount& s) { return s.shape == shape; });
      if (it == counts.end()) it = counts.insert(counts.end(), {shape, 0, false});
      ++it->count;
      it->preferred = it->preferred || preferred(w);
    }
  }
  return counts;
}

std::optional<nlohmann::json> most_measured(const std::vector<ShapeCount>& counts) {
  const ShapeCount* best = nullptr;
  for (const ShapeCount& s : counts) {
    if (!best || s.count > best->count || (s.count == best->count && s.preferred && !best->preferred)) best = &s;
  }
  if (!best) return std::nullopt;
  return best->shape;
}

std::optional<Estimate> throughput_of(const Candidate& c, const Basis& basis) {
  const WorkloadResult* w = find_workload(c, basis.workload);
  const SampleSummary* s = w ? metric_of(*w, basis.metric.c_str()) : nullptr;
  if (!s) return std::nullopt;
  return Estimate{s->mean, s->ci95_half_width};
}

// Mean TTFT + gaps x mean ITL; the interval adds the parts' half-widths in quadrature (independent errors).
std::optional<Estimate> latency_of(const Candidate& c, const Basis& basis) {
  const WorkloadResult* w = find_workload(c, basis.workload);
  if (!w) return std::nullopt;
  const SampleSummary* ttft = metric_of(*w, metric::kTimeToFirstTokenMs);
  const SampleSummary* itl = metric_of(*w, metric::kInterTokenLatencyMs);
  if ((basis.with_ttft && !ttft) || (basis.with_itl && !itl)) return std::nullopt;
  Estimate e;
  double variance = 0;
  bool has_interval = true;
  if (basis.with_ttft) {
    e.value += ttft->mean;
    has_interval = has_interval && ttft->ci95_half_width;
    variance += std::pow(ttft->ci95_half_width.value_or(0), 2);
  }
  if (basis.with_itl) {
    e.value += basis.itl_gaps * itl->mean;
    has_interval = has_interval && itl->ci95_half_width;
    variance += std::pow(basis.itl_gaps * itl->ci95_half_width.value_or(0), 2);
  }
  if (has_interval) e.ci95_half_width = std::sqrt(variance);
  return e;
}

struct Ranked {
  size_t index = 0;
  Estimate score;
};

// The candidates `takes_part` admits that have a score, best first (stable: ties keep the recorded order).
std::vector<Ranked> rank(const std::vector<Candidate>& candidates,
                         const std::function<bool(const Candidate&)>& takes_part,
                         const std::function<std::optional<Estimate>(const Candidate&)>& score, bool higher_is_better) {
  std::vector<Ranked> ranked;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!eligible(candidates[i]) || !takes_part(candidates[i])) continue;
    if (auto s = score(candidates[i])) ranked.push_back({i, *s});
  }
  std::ranges::stable_sort(ranked, [&](const Ranked& a, const Ranked& b) {
    return higher_is_better ? a.score.value > b.score.value : a.score.value < b.score.value;
  });
  return ranked;
}

ScenarioRecommendation started(Scenario scenario, const std::optional<Basis>& basis, const char* unit) {
  ScenarioRecommendation r;
  r.scenario = scenario;
  r.basis = basis;
  r.score_unit = unit;
  return r;
}

void fill_ranking(ScenarioRecommendation& r, const std::vector<Candidate>& candidates,
                  const std::vector<Ranked>& ranked, bool higher_is_better) {
  if (ranked.empty()) return;
  r.winner = ranked[0].index;
  r.winner_score = ranked[0].score;
  if (const WorkloadResult* w = find_workload(candidates[ranked[0].index], r.basis->workload)) r.trial_id = w->trial_id;
  if (ranked.size() < 2) return;
  r.runner_up = ranked[1].index;
  r.runner_up_score = ranked[1].score;
  r.margin = compute_margin(ranked[0].score, ranked[1].score, higher_is_better);
}

// The words of a scenario that ranks every eligible candidate by one score, highest first.
struct HighestRule {
  Scenario scenario;
  const char* unit;
  const char* rule_without_basis;
  const char* no_basis_reason;
  const char* rule;  // with {} for the basis's description
};

ScenarioRecommendation pick_highest(const HighestRule& words, const std::vector<Candidate>& candidates,
                                    const std::optional<Basis>& basis,
                                    const std::function<std::optional<Estimate>(const Candidate&)>& score) {
  ScenarioRecommendation r = started(words.scenario, basis, words.unit);
  if (!basis) {
    r.rule = words.rule_without_basis;
    r.no_winner_reason = words.no_basis_reason;
    return r;
  }
  r.rule = fmt::format(fmt::runtime(words.rule), basis->description);
  fill_ranking(r, candidates,
               rank(
                   candidates, [](const Candidate&) { return true; }, score, true),
               true);
  if (!r.winner) r.no_winner_reason = fmt::format("no eligible configuration measured {}", basis->description);
  return r;
}

ScenarioRecommendation pick_throughput(const std::vector<Candidate>& candidates, const std::optional<Basis>& basis) {
  static constexpr HighestRule kWords{Scenario::throughput, "tokens/s", "highest throughput at any parallelism",
                                      "no eligible configuration measured aggregate_tps, tg_tps or pp_tps",
                                      "highest {}, at any parallelism"};
  return pick_highest(kWords, candidates, basis, [](const Candidate& c) { return c.throughput_tps; });
}

ScenarioRecommendation pick_latency(const std::vector<Candidate>& candidates, const std::optional<Basis>& basis) {
  ScenarioRecommendation r = started(Scenario::latency, basis, "ms");
  if (!basis) {
    r.rule = fmt::format("lowest reply time at 1-{} parallel sequences", kLatencyMaxParallel);
    r.no_winner_reason =
        fmt::format("no eligible configuration with 1-{} parallel sequences measured TTFT or ITL", kLatencyMaxParallel);
    return r;
  }
  r.rule = fmt::format("lowest reply time = {}, at 1-{} parallel sequences", basis->description, kLatencyMaxParallel);
  auto ranked = rank(
      candidates, latency_parallelism, [&](const Candidate& c) { return c.latency_ms; }, false);
  fill_ranking(r, candidates, ranked, false);
  if (!r.winner) r.no_winner_reason = "no eligible configuration measured every part of the reply time";
  return r;
}

ScenarioRecommendation pick_mixed(const std::vector<Candidate>& candidates, const std::optional<Basis>& throughput,
                                  const std::optional<Basis>& latency) {
  ScenarioRecommendation r = started(Scenario::mixed, throughput, "tokens/s");
  r.rule = fmt::format("highest throughput among configurations whose reply time is within {:.0f}% of the best",
                       kMixedLatencyAllowance * 100);
  if (!throughput || !latency) {
    r.no_winner_reason = "needs both a throughput and a latency measurement";
    return r;
  }
  std::optional<double> best_latency;
  for (const Candidate& c : candidates) {
    if (eligible(c) && c.latency_ms && (!best_latency || c.latency_ms->value < *best_latency))
      best_latency = c.latency_ms->value;
  }
  if (!best_latency) {
    r.no_winner_reason = fmt::format("no eligible configuration measured {}", latency->description);
    return r;
  }
  const double limit = *best_latency * (1 + kMixedLatencyAllowance);
  r.rule = fmt::format(
      "highest {} among configurations whose reply time ({}) is within {:.0f}% of the best "
      "({:.2f} ms, so at most {:.2f} ms), at any parallelism",
      throughput->description, latency->description, kMixedLatencyAllowance * 100, *best_latency, limit);
  auto within = [&](const Candidate& c) { return c.latency_ms && c.latency_ms->value <= limit; };
  auto ranked = rank(
      candidates, within, [&](const Candidate& c) { return c.throughput_tps; }, true);
  fill_ranking(r, candidates, ranked, true);
  if (!r.winner) {
    r.no_winner_reason =
        fmt::format("no eligible configuration within the reply-time limit measured {}", throughput->description);
  }
  return r;
}

ScenarioRecommendation pick_serving(const std::vector<Candidate>& candidates, const std::optional<Basis>& basis) {
  static constexpr HighestRule kWords{
      Scenario::serving, "requests/s", "most goodput (requests/s within the objective) of a served load",
      "no eligible configuration ran a served workload (sweep --serve)", "most {}, at any -np"};
  return pick_highest(kWords, candidates, basis, [&](const Candidate& c) { return throughput_of(c, *basis); });
}

std::string latency_description(const Basis& b) {
  const std::string shape = describe_shape(b.workload);
  if (b.with_ttft && b.with_itl) return fmt::format("mean TTFT + {} x mean ITL of {}", b.itl_gaps, shape);
  if (b.with_ttft) return fmt::format("mean TTFT of {}", shape);
  return fmt::format("{} x mean ITL of {}", b.itl_gaps, shape);
}

}  // namespace

std::optional<Basis> choose_throughput_basis(const std::vector<Candidate>& candidates) {
  for (const char* metric_name :
       {metric::kAggregateTokensPerSecond, metric::kGenTokensPerSecond, metric::kPromptTokensPerSecond}) {
    auto counts = count_shapes(
        candidates, [](const Candidate&) { return true; },
        [&](const WorkloadResult& w) { return metric_of(w, metric_name) != nullptr; },
        [](const WorkloadResult&) { return false; });
    auto shape = most_measured(counts);
    if (!shape) continue;
    Basis b;
    b.metric = metric_name;
    b.workload = *shape;
    b.description = fmt::format("mean {} of {}", metric_name, describe_shape(*shape));
    if (config_text(*shape, "kind") == "batched") b.description += " (any -np)";
    return b;
  }
  return std::nullopt;
}

std::optional<Basis> choose_latency_basis(const std::vector<Candidate>& candidates) {
  auto has_ttft = [](const WorkloadResult& w) { return metric_of(w, metric::kTimeToFirstTokenMs) != nullptr; };
  auto has_itl = [](const WorkloadResult& w) { return metric_of(w, metric::kInterTokenLatencyMs) != nullptr; };
  auto counts = count_shapes(
      candidates, latency_parallelism, [&](const WorkloadResult& w) { return has_ttft(w) || has_itl(w); },
      [&](const WorkloadResult& w) { return has_ttft(w) && has_itl(w); });
  auto shape = most_measured(counts);
  if (!shape) return std::nullopt;
  Basis b;
  b.metric = "latency";
  b.workload = *shape;
  b.itl_gaps = std::max<int>(0, int(config_int(*shape, "n_gen", 0)) - 1);
  for (const Candidate& c : candidates) {
    if (!eligible(c) || !latency_parallelism(c)) continue;
    if (const WorkloadResult* w = find_workload(c, *shape)) {
      b.with_ttft = b.with_ttft || has_ttft(*w);
      b.with_itl = b.with_itl || has_itl(*w);
    }
  }
  // A reply of one token has no gaps: ITL does not add to it.
  if (b.itl_gaps == 0 && b.with_ttft) b.with_itl = false;
  if (b.itl_gaps == 0 && b.with_itl) b.itl_gaps = 1;  // ITL alone: compare one gap
  b.description = latency_description(b);
  return b;
}

std::optional<Basis> choose_serving_basis(const std::vector<Candidate>& candidates) {
  auto counts = count_shapes(
      candidates, [](const Candidate&) { return true; },
      [](const WorkloadResult& w) { return metric_of(w, metric::kGoodputPerSecond) != nullptr; },
      [](const WorkloadResult&) { return false; });
  const ShapeCount* best = nullptr;
  for (const ShapeCount& s : counts) {
    if (!best || s.count > best->count ||
        (s.count == best->count && config_int(s.shape, "clients", 0) > config_int(best->shape, "clients", 0)))
      best = &s;
  }
  if (!best) return std::nullopt;
  Basis b;
  b.metric = metric::kGoodputPerSecond;
  b.workload = best->shape;
  const double ttft = best->shape.value("slo_ttft_ms", 0.0), itl = best->shape.value("slo_itl_ms", 0.0);
  std::string objective = "no objective: every completed request";
  if (ttft > 0 || itl > 0) {
    objective =
        fmt::format("TTFT <= {} and time per output token <= {}", ttft > 0 ? fmt::format("{:g} ms", ttft) : "any",
                    itl > 0 ? fmt::format("{:g} ms", itl) : "any");
  }
  b.description = fmt::format("mean goodput_rps of {} ({})", describe_shape(b.workload), objective);
  return b;
}

void score_candidates(std::vector<Candidate>& candidates, const std::optional<Basis>& throughput,
                      const std::optional<Basis>& latency) {
  for (Candidate& c : candidates) {
    if (throughput) c.throughput_tps = throughput_of(c, *throughput);
    if (!latency) continue;
    c.latency_ms = latency_of(c, *latency);
    if (const WorkloadResult* w = find_workload(c, latency->workload)) {
      if (const SampleSummary* ttft = metric_of(*w, metric::kTimeToFirstTokenMs)) c.ttft_ms = ttft->median;
      if (const SampleSummary* itl = metric_of(*w, metric::kInterTokenLatencyMs)) {
        c.itl_p50_ms = itl->p50;
        c.itl_p95_ms = itl->p95;
      }
    }
  }
}

ScenarioRecommendation pick_scenario(Scenario scenario, const std::vector<Candidate>& candidates,
                                     const std::optional<Basis>& throughput, const std::optional<Basis>& latency,
                                     const std::optional<Basis>& serving) {
  switch (scenario) {
    case Scenario::latency:
      return pick_latency(candidates, latency);
    case Scenario::throughput:
      return pick_throughput(candidates, throughput);
    case Scenario::mixed:
      return pick_mixed(candidates, throughput, latency);
    case Scenario::serving:
      return pick_serving(candidates, serving);
  }
  return {};
}

}  // namespace infertune
