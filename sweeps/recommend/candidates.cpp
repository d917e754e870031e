#include "sweeps/recommend/candidates.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "sweeps/trial/trial_config.h"

namespace infertune {
namespace {

std::optional<int64_t> larger_known(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (a && b) return std::max(*a, *b);
  return a ? a : b;
}

// The planner's name of the workload (Workload::name); a config it cannot read is described by its shape.
std::string workload_name(const nlohmann::json& workload) {
  auto parsed = parse_workload(workload);
  return parsed ? parsed->name() : describe_shape(workload_shape(workload));
}

WorkloadResult workload_result(const StoredTrial& stored, const nlohmann::json& workload) {
  WorkloadResult result;
  result.trial_id = stored.id;
  result.workload_json = workload;
  result.workload = workload_name(workload);
  for (const MetricRecord& m : stored.metrics) result.metrics[m.metric] = m.summary;
  return result;
}

std::set<std::string> workload_keys(const Candidate& c) {
  std::set<std::string> keys;
  for (const WorkloadResult& w : c.workloads) keys.insert(w.workload_json.dump());
  return keys;
}

bool disjoint(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::ranges::none_of(a, [&](const std::string& k) { return b.contains(k); });
}

void absorb(Candidate& into, Candidate&& other) {
  const int64_t ctx = std::max(into.n_ctx(), other.n_ctx());
  into.config["n_ctx"] = ctx;
  into.peak_rss_bytes = larger_known(into.peak_rss_bytes, other.peak_rss_bytes);
  for (WorkloadResult& w : other.workloads) into.workloads.push_back(std::move(w));
}

// Merges the candidates that differ only in n_ctx and have no workload in common: the trace of -c 0.
std::vector<Candidate> merge_context_variants(std::vector<Candidate> exact) {
  std::vector<Candidate> merged;
  std::vector<std::string> merged_keys;  // config without n_ctx, per merged candidate
  for (Candidate& c : exact) {
    nlohmann::json without_ctx = c.config;
    without_ctx.erase("n_ctx");
    const std::string key = without_ctx.dump();
    bool absorbed = false;
    for (size_t i = 0; i < merged.size() && !absorbed; ++i) {
      if (merged_keys[i] != key || !disjoint(workload_keys(merged[i]), workload_keys(c))) continue;
      absorb(merged[i], std::move(c));
      absorbed = true;
    }
    if (absorbed) continue;
    merged_keys.push_back(key);
    merged.push_back(std::move(c));
  }
  return merged;
}

}  // namespace

int Candidate::n_parallel() const { return int(config_int(config, "n_parallel", 1)); }

int64_t Candidate::n_ctx() const { return config_int(config, "n_ctx", 0); }

nlohmann::json workload_shape(const nlohmann::json& workload) {
  nlohmann::json shape{{"kind", config_text(workload, "kind")},
                       {"n_prompt", int(config_int(workload, "n_prompt", 0))},
                       {"n_gen", int(config_int(workload, "n_gen", 0))},
                       {"depth", int(config_int(workload, "depth", 0))}};
  // A served load is also its number of clients and its objective (the server's slots, -np, are the candidate's).
  if (shape["kind"] == "serve") {
    shape["clients"] = int(config_int(workload, "clients", 0));
    for (const char* key : {"slo_ttft_ms", "slo_itl_ms"}) {
      const auto it = workload.find(key);
      shape[key] = it != workload.end() && it->is_number() ? it->get<double>() : 0.0;
    }
  }
  return shape;
}

std::string describe_shape(const nlohmann::json& shape) {
  const std::string kind = config_text(shape, "kind");
  const int pp = int(config_int(shape, "n_prompt", 0)), tg = int(config_int(shape, "n_gen", 0)),
            depth = int(config_int(shape, "depth", 0));
  std::string text;
  if (kind == "pp")
    text = fmt::format("pp{}", pp);
  else if (kind == "tg")
    text = fmt::format("tg{}", tg);
  else if (kind == "pp+tg")
    text = fmt::format("pp{}+tg{}", pp, tg);
  else if (kind == "batched")
    text = fmt::format("batched pp{}+tg{}", pp, tg);
  else if (kind == "serve")
    text = fmt::format("serve c{} pp{}+tg{}", config_int(shape, "clients", 0), pp, tg);
  else
    text = fmt::format("{} pp{} tg{}", kind, pp, tg);
  if (depth > 0) text += fmt::format("@d{}", depth);
  return text;
}

const WorkloadResult* find_workload(const Candidate& candidate, const nlohmann::json& shape) {
  for (const WorkloadResult& w : candidate.workloads) {
    if (workload_shape(w.workload_json) == shape) return &w;
  }
  return nullptr;
}

CandidateSet build_candidates(const std::vector<StoredTrial>& ok_trials,
                              const std::map<int64_t, std::string>& model_paths) {
  CandidateSet set;
  std::vector<Candidate> exact;
  std::map<std::string, size_t> by_config;  // config without workload -> index into exact
  for (const StoredTrial& stored : ok_trials) {
    nlohmann::json config = nlohmann::json::parse(stored.trial.config_json, nullptr, false);
    if (!config.is_object() || !config.contains("workload") || !config["workload"].is_object()) {
      ++set.n_unusable;
      continue;
    }
    const nlohmann::json workload = config["workload"];
    config.erase("workload");
    const auto [at, is_new] = by_config.try_emplace(config.dump(), exact.size());
    if (is_new) {
      Candidate& c = exact.emplace_back();
      c.config = config;
      auto path = stored.trial.model_id ? model_paths.find(*stored.trial.model_id) : model_paths.end();
      c.model_path = path != model_paths.end() ? path->second : config_text(config, "model");
      c.model_id = stored.trial.model_id;
    }
    Candidate& c = exact[at->second];
    c.workloads.push_back(workload_result(stored, workload));
    c.peak_rss_bytes = larger_known(c.peak_rss_bytes,
                                    larger_known(stored.trial.peak_rss_bytes, stored.trial.predicted_peak_rss_bytes));
  }
  set.candidates = merge_context_variants(std::move(exact));
  return set;
}

void apply_constraints(std::vector<Candidate>& candidates, const RecommendOptions& options) {
  if (!options.max_mem_bytes) return;
  const std::string limit = human_bytes(int64_t(*options.max_mem_bytes));
  for (Candidate& c : candidates) {
    if (c.peak_rss_bytes && uint64_t(*c.peak_rss_bytes) > *options.max_mem_bytes) {
      c.excluded_reason = fmt::format("peak RSS {} exceeds --max-mem {}", human_bytes(*c.peak_rss_bytes), limit);
    } else if (c.command_memory && c.command_memory->total() > *options.max_mem_bytes) {
      c.excluded_reason = fmt::format("at -c {} it needs {} (predicted), over --max-mem {}", c.command_ctx,
                                      human_bytes(int64_t(c.command_memory->total())), limit);
    }
  }
}

std::string quality_budget_text(const RecommendOptions& options) {
  std::vector<std::string> parts;
  if (options.max_quality_loss_pct)
    parts.push_back(fmt::format("--max-quality-loss {}%", *options.max_quality_loss_pct));
  if (options.max_kld) parts.push_back(fmt::format("--max-kld {}", *options.max_kld));
  std::string text;
  for (const std::string& p : parts) text += (text.empty() ? "" : ", ") + p;
  return text;
}

namespace {

// Why the candidate has no figures to hold against a budget; empty when it has them.
std::string unjudged_reason(const Candidate& c) {
  if (!c.quality) {
    return config_text(c.config, "quant").empty()
               ? "a model file used as given has no base to be compared with"
               : "none were recorded for these variants (a sweep run with --no-quality, or one from before quality "
                 "figures)";
  }
  if (c.quality->status == QualityStatus::measured && c.quality->ppl_increase_pct() && c.quality->kld_mean) return "";
  return c.quality->reason.empty() ? std::string("no quality figures") : c.quality->reason;
}

}  // namespace

std::vector<std::string> apply_quality(std::vector<Candidate>& candidates,
                                       const std::vector<VariantQualityRecord>& quality,
                                       const RecommendOptions& options) {
  for (Candidate& c : candidates) {
    if (!c.model_id) continue;
    for (const VariantQualityRecord& q : quality) {
      if (q.model_id == *c.model_id) c.quality = q;
    }
  }
  const std::string budget = quality_budget_text(options);
  std::vector<std::string> notes;
  std::map<std::string, size_t> unjudged;  // reason -> configurations
  for (Candidate& c : candidates) {
    const std::string why = unjudged_reason(c);
    if (!why.empty()) {
      // Only variants need saying; a sweep of model files has no quality to speak of.
      if (c.quality || !config_text(c.config, "quant").empty() || !budget.empty()) ++unjudged[why];
      if (!budget.empty()) c.quality_note = "quality budget not applied: " + why;
      continue;
    }
    if (budget.empty() || !c.excluded_reason.empty()) continue;
    const double increase = *c.quality->ppl_increase_pct(), kld = *c.quality->kld_mean;
    if (options.max_quality_loss_pct && increase > *options.max_quality_loss_pct) {
      c.excluded_reason = fmt::format("perplexity {:+.2f}% over the base exceeds --max-quality-loss {}%", increase,
                                      *options.max_quality_loss_pct);
    } else if (options.max_kld && kld > *options.max_kld) {
      c.excluded_reason =
          fmt::format("mean KL divergence {:.5f} from the base exceeds --max-kld {}", kld, *options.max_kld);
    }
  }
  for (const auto& [why, count] : unjudged) {
    notes.push_back(fmt::format("{}{} configuration{}: {}",
                                budget.empty() ? "no quality figures for " : budget + " not applied to ", count,
                                count == 1 ? "" : "s", why));
  }
  return notes;
}

int64_t config_int(const nlohmann::json& object, const char* key, int64_t fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return fallback;
  return it->get<int64_t>();
}

std::string config_text(const nlohmann::json& object, const char* key, const std::string& fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

std::string human_bytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", bytes);
}

}  // namespace infertune
