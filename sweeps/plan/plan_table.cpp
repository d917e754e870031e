#include "sweeps/plan/plan_table.h"

#include <fmt/format.h>

namespace infertune {

namespace {

std::string mib(uint64_t bytes) { return fmt::format("{:.1f}", static_cast<double>(bytes) / 1048576.0); }

std::string group_title(const TrialGroup& g) {
  const std::string quant = g.key["quant"].get<std::string>();
  return fmt::format("{}{} -ngl {} mmap {}", g.key["model"].get<std::string>(), quant.empty() ? "" : " as " + quant,
                     g.key["n_gpu_layers"].get<int>(), g.key["mmap"].get<bool>() ? 1 : 0);
}

std::string trial_line(const PlannedTrial& t) {
  const auto& c = t.config;
  std::string mem = t.memory ? fmt::format("{:>9} {:>8} {:>8} {:>9}", mib(t.memory->weights), mib(t.memory->kv),
                                           mib(t.memory->compute), mib(t.memory->total()))
                             : fmt::format("{:>9} {:>8} {:>8} {:>9}", "-", "-", "-", "-");
  return fmt::format("{:>5} {} {:>3} {:>3} {:>10} {:>6} {:>6} {:>5} {:>5} {:>3} {:>4} {:>4} {:>4} {:<26} {} {}\n",
                     t.index + 1, t.hash, c["threads"].get<int>(), c["threads_batch"].get<int>(),
                     c["numa"].get<std::string>(), c["cpu_mask"].get<std::string>(), c["n_ctx"].get<uint32_t>(),
                     c["n_batch"].get<int>(), c["n_ubatch"].get<int>(), c["n_parallel"].get<int>(),
                     c["type_k"].get<std::string>(), c["type_v"].get<std::string>(), c["flash_attn"].get<std::string>(),
                     t.workload, mem, t.skipped() ? "skip: " + t.skip_reason : "run");
}

}  // namespace

std::string format_plan(const SweepSpec& spec, const SweepPlan& plan) {
  std::string out = fmt::format("sweep plan (dry run), spec hash {}: {} trials in {} reload groups, {} skipped\n",
                                plan.spec_hash, plan.trials.size(), plan.groups.size(), plan.n_skipped());
  if (spec.max_mem_bytes) out += fmt::format("--max-mem {} MiB\n", mib(*spec.max_mem_bytes));
  if (spec.min_ctx) out += fmt::format("--min-ctx {}\n", spec.min_ctx);
  if (spec.time_budget_s) out += fmt::format("time budget {:g} s (enforced by the runner)\n", *spec.time_budget_s);
  const std::string header = fmt::format(
      "{:>5} {:<16} {:>3} {:>3} {:>10} {:>6} {:>6} {:>5} {:>5} {:>3} {:>4} {:>4} {:>4} {:<26} {:>9} "
      "{:>8} {:>8} {:>9} {}\n",
      "#", "config hash", "t", "tb", "numa", "C", "c", "b", "ub", "np", "ctk", "ctv", "fa", "workload", "weights", "kv",
      "compute", "total MiB", "status");
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    const TrialGroup& group = plan.groups[g];
    size_t skipped = 0;
    for (size_t i : group.trials) skipped += plan.trials[i].skipped();
    out += fmt::format("\ngroup {}/{}: {} ({} trials, {} skipped)\n", g + 1, plan.groups.size(), group_title(group),
                       group.trials.size(), skipped);
    out += header;
    for (size_t i : group.trials) out += trial_line(plan.trials[i]);
  }
  return out;
}

nlohmann::json plan_to_json(const SweepPlan& plan) {
  nlohmann::json j{{"spec_hash", plan.spec_hash}, {"groups", nlohmann::json::array()}};
  for (const TrialGroup& g : plan.groups) {
    nlohmann::json trials = nlohmann::json::array();
    for (size_t i : g.trials) {
      const PlannedTrial& t = plan.trials[i];
      nlohmann::json tj{{"index", t.index}, {"config", t.config}, {"config_hash", t.hash}, {"workload", t.workload}};
      if (t.memory) {
        tj["predicted_bytes"] = {{"weights", t.memory->weights},
                                 {"kv", t.memory->kv},
                                 {"compute", t.memory->compute},
                                 {"total", t.memory->total()}};
      }
      tj["skip_reason"] = t.skipped() ? nlohmann::json(t.skip_reason) : nlohmann::json(nullptr);
      trials.push_back(std::move(tj));
    }
    j["groups"].push_back({{"key", g.key}, {"trials", std::move(trials)}});
  }
  return j;
}

}  // namespace infertune
