#pragma once
// A sweep spec expanded into trials: the cartesian product of its dimensions and workloads, each trial a
// canonical configuration (JSON) whose config_hash is the results store's UNIQUE key. Trials are grouped
// by what needs a model reload (model file or variant, the offload: -ngl, -sm, -ts, -mg; mmap), so a worker
// loads each group's model, and uploads its offloaded layers, once. Configurations that cannot run
// (predicted over --max-mem or a GPU's memory, a context under --min-ctx or too small for the workload, -ngl
// without a GPU backend, a KV type the model's heads do not fit) are kept in the plan as skipped, with the
// prediction and the reason.
//
// Order (--order): grouped (the product order: the workload outermost, then the settings in the settings
// table's order, engine/settings/settings_table.h), interleaved (within each group, from both ends
// alternately: first, last, second, second last, ... so that slow drift of the machine does not line up
// with a dimension swept monotonically), random:SEED (groups and the trials of each group shuffled by a
// fixed generator: the same seed gives the same order on every platform).
#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/result.h"
#include "sweeps/plan/memory_model.h"
#include "sweeps/spec/sweep_spec.h"

namespace infertune {

struct PlannedTrial {
  size_t index = 0;  // position in run order
  size_t group = 0;  // into SweepPlan::groups
  nlohmann::json config;
  std::string hash;                        // config_hash(config)
  std::string workload;                    // Workload::name()
  std::optional<MemoryPrediction> memory;  // absent when it could not be predicted (see skip_reason)
  std::string skip_reason;                 // empty: the trial runs
  bool skipped() const { return !skip_reason.empty(); }
};

struct TrialGroup {
  nlohmann::json key;          // model, quant, the offload (-ngl, -sm, -ts, -mg), mmap
  std::vector<size_t> trials;  // indices into SweepPlan::trials, in run order
};

struct SweepPlan {
  std::string spec_hash;
  std::vector<TrialGroup> groups;    // in run order
  std::vector<PlannedTrial> trials;  // in run order (group by group)
  size_t n_skipped() const;
};

// The shape of a model file, or of the variant of it in `quant` (a ggml type name; empty: as stored).
using ModelShapeFn = std::function<Result<ModelShape>(const std::string& path, const std::string& quant)>;

// Reads GGUF headers, each file once.
ModelShapeFn gguf_model_shapes();

// Errors when a model cannot be read (naming the file); everything else a trial cannot do is a skip.
// `gpu_memory`: each of this host's GPUs' memory by device index (gpu_device_memory); empty: no GPU, and
// trials with -ngl are skipped. Each trial's offload is dealt over the GPUs as the engine deals it (-sm,
// -ts, -mg; layer_split.h), and skipped when a device's share does not fit its memory less
// kDeviceReserveBytes. -ngl auto becomes the most layers whose shares fit, per trial.
Result<SweepPlan> plan_sweep(const SweepSpec& spec, const ModelShapeFn& shapes,
                             std::span<const uint64_t> gpu_memory = {});

}  // namespace infertune
