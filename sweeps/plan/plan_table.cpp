#include "sweeps/plan/plan_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/settings/settings_table.h"
#include "sweeps/spec/setting_json.h"

namespace infertune {

namespace {

std::string mib(uint64_t bytes) { return fmt::format("{:.1f}", static_cast<double>(bytes) / 1048576.0); }

// The canonical text of `setting` in a config the planner wrote (its default where the field is absent: a
// setting stored only when set).
std::string value_of(const Setting& setting, const nlohmann::json& config) {
  auto it = config.find(setting.config_key);
  if (it == config.end()) return std::string(setting.default_value);
  auto text = setting_json_text(setting, *it);
  return text ? *text : it->dump();
}

std::string flag_name(const Setting& setting) {
  const std::string_view flag = setting.shown_flag();
  return std::string(flag.substr(flag.find_first_not_of('-')));
}

std::string group_title(const TrialGroup& g) {
  const std::string quant = g.key["quant"].get<std::string>();
  std::string title = g.key["model"].get<std::string>() + (quant.empty() ? "" : " as " + quant);
  for (const Setting* s : settings_of(Command::sweep)) {
    if (!s->reloads_model) continue;
    // A setting added after schema v2 (-sm, -ts, -mg) is named only when the group sets it.
    if (!s->stored_when_default && !g.key.contains(s->config_key)) continue;
    title += fmt::format(" {} {}", s->shown_flag(), value_of(*s, g.key));
  }
  return title;
}

// The columns of the trial lines: every sweep setting that does not reload the model (those head the group),
// as wide as its widest value.
struct Column {
  const Setting* setting;
  size_t width;
};

std::vector<Column> setting_columns(const SweepPlan& plan) {
  std::vector<Column> columns;
  for (const Setting* s : settings_of(Command::sweep)) {
    if (s->reloads_model) continue;
    size_t width = flag_name(*s).size();
    for (const PlannedTrial& t : plan.trials) width = std::max(width, value_of(*s, t.config).size());
    columns.push_back({s, width});
  }
  return columns;
}

std::string trial_line(const PlannedTrial& t, const std::vector<Column>& columns) {
  std::string line = fmt::format("{:>5} {}", t.index + 1, t.hash);
  for (const Column& c : columns) line += fmt::format(" {:>{}}", value_of(*c.setting, t.config), c.width);
  const bool gpu = t.memory && t.memory->gpu.total() > 0;
  const std::string mem = t.memory ? fmt::format("{:>9} {:>8} {:>8} {:>9} {:>9}", mib(t.memory->weights),
                                                 mib(t.memory->kv), mib(t.memory->compute), mib(t.memory->total()),
                                                 gpu ? mib(t.memory->gpu.total()) : std::string("-"))
                                   : fmt::format("{:>9} {:>8} {:>8} {:>9} {:>9}", "-", "-", "-", "-", "-");
  return line + fmt::format(" {:<26} {} {}\n", t.workload, mem, t.skipped() ? "skip: " + t.skip_reason : "run");
}

std::string header_line(const std::vector<Column>& columns) {
  std::string line = fmt::format("{:>5} {:<16}", "#", "config hash");
  for (const Column& c : columns) line += fmt::format(" {:>{}}", flag_name(*c.setting), c.width);
  return line + fmt::format(" {:<26} {:>9} {:>8} {:>8} {:>9} {:>9} {}\n", "workload", "weights", "kv", "compute",
                            "total MiB", "GPU MiB", "status");
}

nlohmann::json gpu_bytes_json(const GpuMemoryUse& use) {
  return {{"weights", use.weights}, {"kv", use.kv}, {"compute", use.compute}, {"total", use.total()}};
}

// Each GPU's share of an offload over several: its device, layers and bytes.
nlohmann::json devices_json(const MemoryPrediction& memory) {
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceMemoryUse& d : memory.gpu_devices) {
    nlohmann::json device = gpu_bytes_json(d.use);
    device["device"] = d.share.device;
    device["layers"] = {d.share.split.first_layer, d.share.split.end_layer};
    device["output"] = d.share.split.output;
    devices.push_back(std::move(device));
  }
  return devices;
}

}  // namespace

std::string format_plan(const SweepSpec& spec, const SweepPlan& plan) {
  std::string out = fmt::format("sweep plan (dry run), spec hash {}: {} trials in {} reload groups, {} skipped\n",
                                plan.spec_hash, plan.trials.size(), plan.groups.size(), plan.n_skipped());
  if (spec.max_mem_bytes) out += fmt::format("--max-mem {} MiB\n", mib(*spec.max_mem_bytes));
  if (spec.min_ctx) out += fmt::format("--min-ctx {}\n", spec.min_ctx);
  if (spec.time_budget_s) out += fmt::format("time budget {:g} s (enforced by the runner)\n", *spec.time_budget_s);
  if (spec.max_quality_loss_pct) {
    out += fmt::format("--max-quality-loss {:g}% (the recommendation's quality budget)\n", *spec.max_quality_loss_pct);
  }
  if (spec.max_kld) out += fmt::format("--max-kld {:g} (the recommendation's quality budget)\n", *spec.max_kld);
  const std::vector<Column> columns = setting_columns(plan);
  const std::string header = header_line(columns);
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    const TrialGroup& group = plan.groups[g];
    size_t skipped = 0;
    for (size_t i : group.trials) skipped += plan.trials[i].skipped();
    out += fmt::format("\ngroup {}/{}: {} ({} trials, {} skipped)\n", g + 1, plan.groups.size(), group_title(group),
                       group.trials.size(), skipped);
    out += header;
    for (size_t i : group.trials) out += trial_line(plan.trials[i], columns);
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
        const GpuMemoryUse& gpu = t.memory->gpu;
        tj["predicted_gpu_bytes"] = gpu_bytes_json(gpu);
        if (t.memory->gpu_devices.size() > 1) tj["predicted_gpu_bytes"]["devices"] = devices_json(*t.memory);
      }
      tj["skip_reason"] = t.skipped() ? nlohmann::json(t.skip_reason) : nlohmann::json(nullptr);
      trials.push_back(std::move(tj));
    }
    j["groups"].push_back({{"key", g.key}, {"trials", std::move(trials)}});
  }
  return j;
}

}  // namespace infertune
