#include "sweeps/plan/trial_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <set>
#include <span>

#include "engine/settings/settings_table.h"
#include "sweeps/spec/config_fields.h"
#include "sweeps/store/stable_hash.h"

namespace infertune {

namespace {

struct Variant {
  std::string path;
  std::string quant;  // empty: the file as it is
};

std::vector<Variant> variants(const SweepSpec& s) {
  std::vector<Variant> out;
  for (const auto& m : s.models) out.push_back({m, ""});
  for (const auto& q : s.quant_types) out.push_back({s.base_model, q});
  return out;
}

// One setting the sweep takes and its values in the spec.
struct Dimension {
  const Setting* setting = nullptr;
  const std::vector<std::string>* values = nullptr;
};

// The spec's dimensions that reload the model (`reload`) or the others, in the settings table's order (the
// product's, the first outermost).
std::vector<Dimension> dimensions(const SweepSpec& s, bool reload) {
  std::vector<Dimension> out;
  for (const Setting* setting : settings_of(Command::sweep)) {
    if (setting->reloads_model != reload) continue;  // trials differing in it cannot share a loaded model
    auto it = s.settings.find(std::string(setting->key));
    if (it != s.settings.end()) out.push_back({setting, &it->second});
  }
  return out;
}

// Calls `visit` with every index tuple of the product of the dimensions' values, the last index fastest
// (once, with no indices, when there are no dimensions; never when a dimension has no value).
template <class Visit>
void for_each_combination(const std::vector<Dimension>& dims, Visit visit) {
  if (std::ranges::any_of(dims, [](const Dimension& d) { return d.values->empty(); })) return;
  std::vector<size_t> at(dims.size(), 0);
  for (;;) {
    visit(at);
    size_t d = dims.size();
    for (;;) {
      if (d == 0) return;
      --d;
      if (++at[d] < dims[d].values->size()) break;
      at[d] = 0;
    }
  }
}

// `settings` with the values the index tuple picks.
EngineSettings with_values(EngineSettings settings, const std::vector<Dimension>& dims, const std::vector<size_t>& at) {
  for (size_t d = 0; d < dims.size(); ++d) dims[d].setting->apply((*dims[d].values)[at[d]], settings);
  return settings;
}

// Where the product picks -np, or none when the sweep does not take it.
std::optional<size_t> parallel_dimension(const std::vector<Dimension>& dims) {
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d].setting->key == "parallel") return d;
  }
  return std::nullopt;
}

// Tokens the workload needs in the cache, and the most one decode gets / logits rows it keeps.
struct WorkloadNeeds {
  uint32_t ctx = 0, decode_tokens = 1, outputs = 1;
};

// Cells of one served request: its prompt (synthetic text calibrated to about n_prompt of the model's tokens,
// so allow an eighth more and the special tokens) and its generated tokens.
uint32_t served_prompt_cells(const Workload& w) { return uint32_t(w.n_prompt + w.n_prompt / 8 + 8); }

// `slots`: the context's sequences (the -np value), which a served workload's server fills.
WorkloadNeeds needs(const Workload& w, uint32_t slots) {
  if (w.kind == WorkloadKind::Serve) {
    const uint32_t n = std::max<uint32_t>(slots, 1);
    return {.ctx = n * (served_prompt_cells(w) + uint32_t(w.n_gen)),
            .decode_tokens = n * served_prompt_cells(w),
            .outputs = n};
  }
  if (w.kind == WorkloadKind::Batched) {
    const uint32_t np = w.n_parallel;
    return {.ctx = np * uint32_t(w.n_prompt + w.n_gen),
            .decode_tokens = w.n_prompt > 0 ? np * w.n_prompt : np,
            .outputs = np};
  }
  return {.ctx = uint32_t(w.depth + w.n_prompt + w.n_gen),
          .decode_tokens = uint32_t(std::max({w.n_prompt, w.depth, 1})),
          .outputs = 1};
}

// What a trial runs with, from the values the product picked: the engine caps -ub at -b, -c 0 is what the
// workload needs, and a batched workload brings its own -np.
EngineSettings fitted_to(EngineSettings settings, const Workload& w, const WorkloadNeeds& need) {
  ContextParams& c = settings.context;
  c.n_ubatch = std::min(c.n_ubatch, c.n_batch);
  if (c.n_ctx == 0) c.n_ctx = std::max<uint32_t>(need.ctx, 1);
  if (w.kind == WorkloadKind::Batched) c.n_seq_max = static_cast<uint32_t>(w.n_parallel);
  return settings;
}

// The stored configuration: the group's model fields, every sweep setting's field, the workload.
nlohmann::json trial_config(const TrialGroup& group, const EngineSettings& settings, const Workload& w) {
  nlohmann::json c = group.key;
  c.update(config_fields(settings));
  c["workload"] = w.to_json();
  return c;
}

// What identifies a configuration by what the engine does: -b above the most tokens the workload hands one
// decode changes nothing, nor -ub above the capped -b, nor how GPUs share an offload of nothing (-ngl 0), nor
// -ts with -sm none. Trials with the same key run once (the first keeps its settings as given), so a
// dimension that only matters for long prompts does not repeat generation.
std::string coincidence_key(const TrialGroup& group, EngineSettings settings, const Workload& w,
                            const WorkloadNeeds& need) {
  ContextParams& c = settings.context;
  c.n_batch = std::min(c.n_batch, need.decode_tokens);
  c.n_ubatch = std::min(c.n_ubatch, c.n_batch);
  nlohmann::json key = trial_config(group, settings, w);
  if (settings.n_gpu_layers == 0) {
    for (const char* split_field : {"split_mode", "main_gpu", "tensor_split"}) key.erase(split_field);
  } else if (settings.split_mode == SplitMode::none) {
    key.erase("tensor_split");
  }
  return config_hash(key);
}

std::string human_bytes(uint64_t b) { return fmt::format("{:.1f} MiB", static_cast<double>(b) / 1048576.0); }

// A trial's offload over this host's GPUs (layer_split.h): each device's layers, or why the GPUs cannot take
// the split options (-ts entries beyond them, -mg not one of them).
struct PlannedOffload {
  std::vector<DeviceLayers> shares;
  std::string error;
};

LayerSplitOptions split_options(const EngineSettings& s) {
  return {.mode = s.split_mode, .main_gpu = s.main_gpu, .proportions = s.tensor_split};
}

// Resolves -ngl auto in `settings` to the most layers whose shares fit (0 when none does) and deals the
// layers. No GPU: nothing (the trial is skipped for it).
PlannedOffload plan_offload(EngineSettings& settings, const ModelShape& shape, const GpuMemoryInputs& in,
                            std::span<const uint64_t> gpu_memory) {
  PlannedOffload offload;
  if (settings.n_gpu_layers == 0 || gpu_memory.empty()) return offload;
  if (shape.config.is_moe()) {
    offload.error = kGpuRunsNoExperts;
    return offload;
  }
  const LayerSplitOptions options = split_options(settings);
  const uint32_t n_layers = shape.config.n_layers;
  // Options the GPUs cannot take fail for every -ngl: said once, before auto would hide them as 0 layers.
  if (auto all = split_layers(static_cast<int>(n_layers) + 1, n_layers, options, gpu_memory); !all) {
    offload.error = all.error().message;
    return offload;
  }
  if (settings.n_gpu_layers == kGpuLayersAuto) {
    settings.n_gpu_layers = fit_split_layers(shape.config, shape.offload, in, options, gpu_memory);
  }
  auto shares = split_layers(settings.n_gpu_layers, n_layers, options, gpu_memory);
  if (shares) offload.shares = std::move(*shares);
  return offload;
}

std::string ngl_text(int ngl) { return ngl == kGpuLayersAuto ? "auto" : std::to_string(ngl); }

// Why the offload does not fit, or empty: a device's share over its memory less what the engine keeps free.
std::string gpu_skip_reason(const MemoryPrediction& memory, std::span<const uint64_t> gpu_memory) {
  for (const DeviceMemoryUse& d : memory.gpu_devices) {
    const uint64_t budget = usable_device_bytes(gpu_memory[static_cast<size_t>(d.share.device)]);
    if (d.use.total() <= budget) continue;
    const OffloadSplit& s = d.share.split;
    return fmt::format("predicted GPU memory {} on GPU {} (layers {}..{}{}) exceeds the {} it can give",
                       human_bytes(d.use.total()), d.share.device, s.first_layer, s.end_layer,
                       s.output ? " and the output layer" : "", human_bytes(budget));
  }
  return {};
}

// Why a configuration cannot run, or empty.
std::string skip_reason(const SweepSpec& spec, const EngineSettings& settings, uint32_t needed_ctx,
                        const Result<MemoryPrediction>& memory, std::span<const uint64_t> gpu_memory,
                        const PlannedOffload& offload) {
  const int ngl = settings.n_gpu_layers;
  if (ngl != 0 && gpu_memory.empty()) return fmt::format("-ngl {}: no CUDA GPU on this host", ngl_text(ngl));
  if (!offload.error.empty()) return fmt::format("-ngl {}: {}", ngl_text(ngl), offload.error);
  const uint32_t n_ctx = settings.context.n_ctx;
  if (n_ctx < needed_ctx)
    return fmt::format("context {} is smaller than the {} tokens the workload needs", n_ctx, needed_ctx);
  if (int(n_ctx) < spec.min_ctx) return fmt::format("context {} is below --min-ctx {}", n_ctx, spec.min_ctx);
  if (!memory) return memory.error().message;
  if (std::string gpu = gpu_skip_reason(*memory, gpu_memory); !gpu.empty()) return gpu;
  if (spec.max_mem_bytes && memory->total() > *spec.max_mem_bytes) {
    return fmt::format("predicted {} exceeds --max-mem {}", human_bytes(memory->total()),
                       human_bytes(*spec.max_mem_bytes));
  }
  return {};
}

// The trials of the spec's product, one reload group at a time.
struct Product {
  const SweepSpec& spec;
  std::vector<Dimension> reload;         // the groups
  std::vector<Dimension> trial;          // the trials of each group, with every workload
  std::span<const uint64_t> gpu_memory;  // each GPU's memory; empty: no GPU
  std::set<std::string> seen;            // coincidence keys: settings that coincide (ub > b, b past the largest
                                         // decode, c 0 and c = needed) run once

  // The group's trials (those of its model `loaded` with), in product order: the workload outermost.
  std::vector<PlannedTrial> trials_of(const TrialGroup& group, const EngineSettings& loaded, const ModelShape& shape) {
    std::vector<PlannedTrial> trials;
    const std::optional<size_t> np = parallel_dimension(trial);
    for (const Workload& w : spec.workloads) {
      for_each_combination(trial, [&](const std::vector<size_t>& at) {
        // A batched workload brings its own -np: only the first value of the dimension is used.
        if (w.kind == WorkloadKind::Batched && np && at[*np] != 0) return;
        if (auto t = planned(group, with_values(loaded, trial, at), w, shape)) trials.push_back(std::move(*t));
      });
    }
    return trials;
  }

  // One trial, or none when it coincides with an earlier one.
  std::optional<PlannedTrial> planned(const TrialGroup& group, const EngineSettings& picked, const Workload& w,
                                      const ModelShape& shape) {
    const WorkloadNeeds need = needs(w, picked.context.n_seq_max);
    EngineSettings settings = fitted_to(picked, w, need);
    const ContextParams& c = settings.context;
    MemoryInputs in{.n_ctx = c.n_ctx,
                    .n_batch = c.n_batch,
                    .n_ubatch = c.n_ubatch,
                    .max_decode_tokens = need.decode_tokens,
                    .n_outputs = need.outputs,
                    .type_k = c.type_k,
                    .type_v = c.type_v,
                    .use_mmap = settings.use_mmap,
                    .n_gpu_layers = settings.n_gpu_layers,
                    .kv_offload = settings.kv_offload};
    const PlannedOffload offload = plan_offload(settings, shape, gpu_memory_inputs(in), gpu_memory);
    // Without a GPU (or with split options it cannot take) auto stays auto, predicted as no offload.
    in.n_gpu_layers = settings.n_gpu_layers == kGpuLayersAuto ? 0 : settings.n_gpu_layers;
    in.gpu_shares = offload.shares;
    if (!seen.insert(coincidence_key(group, settings, w, need)).second) return std::nullopt;
    PlannedTrial t;
    t.config = trial_config(group, settings, w);
    t.hash = config_hash(t.config);
    t.workload = w.name();
    auto memory = predict_memory(shape, in);
    if (memory) t.memory = *memory;
    t.skip_reason = skip_reason(spec, settings, need.ctx, memory, gpu_memory, offload);
    return t;
  }
};

// splitmix64: a fixed generator, so random:SEED orders trials alike everywhere (std::shuffle does not).
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

template <class T>
void shuffle(std::vector<T>& v, SplitMix& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.next() % i]);
}

template <class T>
std::vector<T> from_both_ends(const std::vector<T>& v) {
  std::vector<T> out;
  for (size_t lo = 0, hi = v.size(); lo < hi;) {
    out.push_back(v[lo++]);
    if (lo < hi) out.push_back(v[--hi]);
  }
  return out;
}

}  // namespace

size_t SweepPlan::n_skipped() const {
  return static_cast<size_t>(std::ranges::count_if(trials, [](const PlannedTrial& t) { return t.skipped(); }));
}

ModelShapeFn gguf_model_shapes() {
  auto cache = std::make_shared<std::map<std::pair<std::string, std::string>, ModelShape>>();
  return [cache](const std::string& path, const std::string& quant) -> Result<ModelShape> {
    if (auto it = cache->find({path, quant}); it != cache->end()) return it->second;
    std::optional<GgmlType> type;
    if (!quant.empty()) {
      type = ggml_type_from_name(quant);
      if (!type) return fail("unknown quantization type '{}'", quant);
    }
    auto shape = read_model_shape(path, type);
    if (!shape) return fail("model '{}': {}", path, shape.error().message);
    cache->emplace(std::make_pair(path, quant), *shape);
    return shape;
  };
}

Result<SweepPlan> plan_sweep(const SweepSpec& s, const ModelShapeFn& shapes, std::span<const uint64_t> gpu_memory) {
  SweepPlan plan;
  plan.spec_hash = s.hash();
  std::vector<std::vector<PlannedTrial>> by_group;
  Product product{
      .spec = s, .reload = dimensions(s, true), .trial = dimensions(s, false), .gpu_memory = gpu_memory, .seen = {}};
  for (const Variant& v : variants(s)) {
    auto shape = shapes(v.path, v.quant);
    if (!shape) return shape.error();
    for_each_combination(product.reload, [&](const std::vector<size_t>& at) {
      const EngineSettings loaded = with_values(default_engine_settings(), product.reload, at);
      TrialGroup group;
      group.key = {{"model", v.path}, {"quant", v.quant}};
      for (const Dimension& d : product.reload) {
        const Setting& setting = *d.setting;
        if (!setting.stored_when_default && setting.read(loaded) == setting.default_value) continue;  // old keys
        group.key.update(config_field(setting, loaded));
      }
      by_group.push_back(product.trials_of(group, loaded, *shape));
      plan.groups.push_back(std::move(group));
    });
  }
  // Run order.
  std::vector<size_t> group_order(plan.groups.size());
  for (size_t g = 0; g < group_order.size(); ++g) group_order[g] = g;
  SplitMix rng{s.seed};
  if (s.order == TrialOrder::Random) shuffle(group_order, rng);
  std::vector<TrialGroup> groups;
  for (size_t g : group_order) {
    auto& trials = by_group[g];
    if (trials.empty()) continue;  // every trial coincided with one of an earlier group
    if (s.order == TrialOrder::Random) shuffle(trials, rng);
    if (s.order == TrialOrder::Interleaved) trials = from_both_ends(trials);
    TrialGroup group;
    group.key = plan.groups[g].key;
    for (auto& t : trials) {
      t.index = plan.trials.size();
      t.group = groups.size();
      group.trials.push_back(t.index);
      plan.trials.push_back(std::move(t));
    }
    groups.push_back(std::move(group));
  }
  plan.groups = std::move(groups);
  return plan;
}

}  // namespace infertune
