#include "sweeps/run/load_level_records.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "sweeps/spec/sweep_spec.h"
#include "sweeps/store/metric_names.h"
#include "sweeps/store/stable_hash.h"
#include "sweeps/store/time_text.h"

namespace infertune {
namespace {

// The options that make the measurement what it is (not the key, the timeout or the output format).
nlohmann::json options_json(const LoadOptions& o) {
  nlohmann::json j{{"url", o.url},
                   {"model", o.model},
                   {"api", o.api == LoadApi::chat ? "chat" : "completions"},
                   {"concurrency", o.concurrency},
                   {"rates", o.rates},
                   {"requests", o.requests},
                   {"warmup", o.warmup},
                   {"prompt_tokens", fmt::format("{}:{}", o.prompt_tokens.low, o.prompt_tokens.high)},
                   {"max_tokens", o.max_tokens},
                   {"shared_prefix", o.shared_prefix},
                   {"prompts_file", o.prompts_file},
                   {"ignore_eos", o.ignore_eos},
                   {"seed", o.seed}};
  if (o.slo_ttft_s) j["slo_ttft_ms"] = 1000.0 * *o.slo_ttft_s;
  if (o.slo_itl_s) j["slo_itl_ms"] = 1000.0 * *o.slo_itl_s;
  return j;
}

// The spec text a person reads back from the store: the options as YAML (one key per line).
std::string spec_text(const nlohmann::json& options) {
  std::string text = "loadgen:\n";
  for (const auto& [key, value] : options.items()) text += fmt::format("  {}: {}\n", key, value.dump());
  return text;
}

// The level's configuration: the endpoint and model, and its load as a served workload (the sweep's own form, so
// that recommend and report read both alike), with what a sweep's served workload cannot have: an arrival rate, a
// range of prompt lengths.
nlohmann::json level_config(const LoadOptions& o, const LoadLevel& level) {
  Workload served;
  served.kind = WorkloadKind::Serve;
  served.n_prompt = static_cast<int>(o.prompt_tokens.low);
  served.n_gen = static_cast<int>(o.max_tokens);
  served.clients = level.kind == LoadLevel::Kind::closed ? static_cast<int>(level.concurrency) : 0;
  served.slo_ttft_ms = o.slo_ttft_s ? 1000.0 * *o.slo_ttft_s : 0.0;
  served.slo_itl_ms = o.slo_itl_s ? 1000.0 * *o.slo_itl_s : 0.0;
  nlohmann::json workload = served.to_json();
  if (o.prompt_tokens.high != o.prompt_tokens.low) workload["n_prompt_max"] = o.prompt_tokens.high;
  if (level.kind == LoadLevel::Kind::open) workload["rate"] = level.rate;
  return {{"engine", "endpoint"}, {"endpoint", o.url}, {"model", o.model}, {"workload", workload}};
}

TrialRecord level_trial(int64_t sweep_id, const LoadOptions& o, const LevelRun& run, const LevelSummary& summary) {
  const nlohmann::json config = level_config(o, run.level);
  TrialRecord t;
  t.sweep_id = sweep_id;
  t.config_json = config.dump();
  t.config_hash = config_hash(config);
  t.started_at = t.finished_at = utc_now_text();
  t.duration_s = run.wall_s;
  if (summary.errors == summary.requests) {
    t.status = TrialStatus::failed;
    t.reason = summary.first_error.empty() ? "every request failed" : summary.first_error;
    return t;
  }
  const auto add = [&t](const char* metric, double value) {
    t.samples.push_back({.metric = metric, .repetition = 1, .value = value, .is_warmup = false});
  };
  for (const RequestOutcome& r : run.outcomes) {
    if (!r.ok) continue;
    add(metric::kTimeToFirstTokenMs, 1000.0 * r.ttft_s);
    for (double gap : r.chunk_gaps_s) add(metric::kInterTokenLatencyMs, 1000.0 * gap);
    add(metric::kEndToEndLatencyMs, 1000.0 * r.e2e_s());
  }
  add(metric::kAggregateTokensPerSecond, summary.output_tokens_per_s);
  add(metric::kRequestsPerSecond, summary.requests_per_s);
  add(metric::kGoodputPerSecond, summary.goodput_rps);
  return t;
}

}  // namespace

Result<int64_t> record_load_levels(ResultsStore& store, int64_t host_id, int64_t build_id, const LoadOptions& options,
                                   const std::vector<LevelRun>& runs, const std::vector<LevelSummary>& summaries) {
  if (runs.size() != summaries.size()) {
    return fail("loadgen: {} levels run but {} summarized", runs.size(), summaries.size());
  }
  const nlohmann::json spec = options_json(options);
  auto sweep = store.create_sweep(NewSweep{
      .spec = spec_text(spec), .spec_hash = config_hash(spec), .host_id = host_id, .build_id = build_id, .shard = ""});
  if (!sweep) return sweep.error();
  for (size_t i = 0; i < runs.size(); ++i) {
    if (auto id = store.record_trial(level_trial(*sweep, options, runs[i], summaries[i])); !id) return id.error();
  }
  if (Status s = store.set_sweep_status(*sweep, SweepStatus::done); !s) return s.error();
  return *sweep;
}

}  // namespace infertune
