#include "reports/history/history_metrics.h"

#include <array>
#include <utility>

#include "sweeps/store/metric_names.h"
#include "sweeps/trial/trial_config.h"

namespace infertune {
namespace {

constexpr std::array<std::pair<std::string_view, const char*>, 6> kShortNames{{
    {"tg", metric::kGenTokensPerSecond},
    {"pp", metric::kPromptTokensPerSecond},
    {"ttft", metric::kTimeToFirstTokenMs},
    {"itl", metric::kInterTokenLatencyMs},
    {"e2e", metric::kEndToEndLatencyMs},
    {"aggregate", metric::kAggregateTokensPerSecond},
}};

constexpr std::array<const char*, 18> kStoredNames{metric::kPromptTokensPerSecond,
                                                   metric::kGenTokensPerSecond,
                                                   metric::kTimeToFirstTokenMs,
                                                   metric::kInterTokenLatencyMs,
                                                   metric::kEndToEndLatencyMs,
                                                   metric::kAggregateTokensPerSecond,
                                                   metric::kModelLoadMs,
                                                   metric::kWeightReadGBs,
                                                   metric::kBandwidthPercent,
                                                   metric::kKvBytes,
                                                   metric::kCpuBusyShare,
                                                   metric::kInstructions,
                                                   metric::kCycles,
                                                   metric::kLlcMisses,
                                                   metric::kInstructionsPerCycle,
                                                   metric::kGpuBusyPercent,
                                                   metric::kGpuVramPeakBytes,
                                                   metric::kGpuMemoryClockMhz};

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

Result<std::string> history_metric_named(std::string_view name) {
  for (const auto& [short_name, stored] : kShortNames) {
    if (name == short_name) return std::string(stored);
  }
  for (const char* stored : kStoredNames) {
    if (name == stored) return std::string(stored);
  }
  return fail("--metric {}: expected tg, pp, ttft, itl, e2e, aggregate or a stored metric name (tg_tps, ...)", name);
}

std::string main_metric_of(const nlohmann::json& config) {
  const auto it = config.find("workload");
  if (it == config.end()) return metric::kGenTokensPerSecond;
  auto workload = parse_workload(*it);
  if (!workload) return metric::kGenTokensPerSecond;
  switch (workload->kind) {
    case WorkloadKind::Prompt:
      return metric::kPromptTokensPerSecond;
    case WorkloadKind::Generate:
    case WorkloadKind::PromptGenerate:
      return metric::kGenTokensPerSecond;
    case WorkloadKind::Batched:
    case WorkloadKind::Serve:
      return metric::kAggregateTokensPerSecond;
  }
  return metric::kGenTokensPerSecond;
}

bool higher_is_better(std::string_view metric) {
  return ends_with(metric, "_tps") || ends_with(metric, "_rps") || ends_with(metric, "_gbs") ||
         ends_with(metric, "_pct") || ends_with(metric, "_share") || metric == metric::kInstructionsPerCycle;
}

std::string_view metric_unit(std::string_view metric) {
  if (ends_with(metric, "_tps")) return "tokens/s";
  if (ends_with(metric, "_rps")) return "requests/s";
  if (ends_with(metric, "_ms")) return "ms";
  if (ends_with(metric, "_gbs")) return "GB/s";
  if (ends_with(metric, "_pct")) return "%";
  if (ends_with(metric, "_bytes")) return "bytes";
  if (ends_with(metric, "_mhz")) return "MHz";
  return "";
}

}  // namespace infertune
