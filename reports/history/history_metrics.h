#pragma once
// Which metric a history follows: the names `infertune history --metric` takes, each configuration's
// default (its workload's main metric, the one the sweep's stopping rule watched) and which way is better.
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "kernels/result.h"

namespace infertune {

// "tg", "pp", "ttft", "itl", "e2e", "aggregate", or a stored metric name ("tg_tps", "bandwidth_pct", ...).
Result<std::string> history_metric_named(std::string_view name);

// The main metric of the config's workload: pp -> pp_tps, tg and pp+tg -> tg_tps, batched -> aggregate_tps;
// tg_tps when the config has no workload it can read.
std::string main_metric_of(const nlohmann::json& config);

// Throughputs, bandwidths and shares are better higher; times, bytes, counts and misses lower.
bool higher_is_better(std::string_view metric);

// "tokens/s", "ms", "GB/s", "%" or "" (a count).
std::string_view metric_unit(std::string_view metric);

}  // namespace infertune
