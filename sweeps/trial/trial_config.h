#pragma once
// A planned trial's configuration (PlannedTrial::config, written by sweeps/plan/trial_plan.cpp) read back
// into the values the executor runs it with. The model, quant and mmap fields belong to the worker that
// loaded the model and are not read here. Errors name the field: "config field 'n_ubatch': ...".
#include <nlohmann/json.hpp>

#include <cstdint>

#include "engine/context/flash_attention.h"
#include "engine/threading/placement_options.h"
#include "kernels/ggml_type.h"
#include "kernels/result.h"
#include "sweeps/spec/sweep_spec.h"

namespace infertune {

struct TrialConfig {
  PlacementOptions placement;  // threads (0: physical cores), threads_batch (0: as threads), numa, cpu_mask
  int n_gpu_layers = 0;
  uint32_t n_ctx = 0;
  uint32_t n_batch = 2048;
  uint32_t n_ubatch = 512;
  uint32_t n_parallel = 1;  // the context's sequences (a batched workload's np)
  GgmlType type_k = GgmlType::F16;
  GgmlType type_v = GgmlType::F16;
  FlashAttention flash_attn = FlashAttention::Auto;
  Workload workload;
};

Result<TrialConfig> parse_trial_config(const nlohmann::json& config);

// The workload object of a config ({kind: pp|tg|pp+tg|batched, n_prompt, n_gen, depth, n_parallel}); errors
// name "workload.<field>" and say what the kind needs (a pp workload needs n_prompt > 0, ...).
Result<Workload> parse_workload(const nlohmann::json& workload);

}  // namespace infertune
