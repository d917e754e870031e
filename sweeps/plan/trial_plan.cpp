#include "sweeps/plan/trial_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <set>

#include "engine/kv/kv_storage.h"
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

// Calls `visit` with every index tuple of a product of `sizes`, the last index fastest.
template <size_t N, class Visit>
void for_each_index(const std::array<size_t, N>& sizes, Visit visit) {
  std::array<size_t, N> at{};
  for (;;) {
    visit(at);
    size_t d = N;
    while (d > 0) {
      --d;
      if (++at[d] < sizes[d]) break;
      at[d] = 0;
      if (d == 0) return;
    }
    if (N == 0) return;
  }
}

// Tokens the workload needs in the cache, and the most one decode gets / logits rows it keeps.
struct WorkloadNeeds {
  uint32_t ctx = 0, decode_tokens = 1, outputs = 1;
};

WorkloadNeeds needs(const Workload& w) {
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

// What identifies a configuration by what the engine does: -b above the most tokens the workload hands one
// decode changes nothing, nor -ub above the capped -b. Trials with the same key run once (the first keeps
// its settings as given), so a dimension that only matters for long prompts does not repeat generation.
std::string coincidence_key(nlohmann::json c, const WorkloadNeeds& need) {
  const int b = std::min(c["n_batch"].get<int>(), int(need.decode_tokens));
  c["n_batch"] = b;
  c["n_ubatch"] = std::min(c["n_ubatch"].get<int>(), b);
  return config_hash(c);
}

// One trial of the product, before ordering.
struct Draft {
  size_t group = 0;
  PlannedTrial trial;
};

std::string human_bytes(uint64_t b) { return fmt::format("{:.1f} MiB", static_cast<double>(b) / 1048576.0); }

// Why a configuration cannot run, or empty.
std::string skip_reason(const SweepSpec& spec, const nlohmann::json& c, uint32_t needed_ctx,
                        const Result<MemoryPrediction>& memory, bool has_gpu) {
  const int ngl = c["n_gpu_layers"];
  if (ngl > 0 && !has_gpu) return fmt::format("-ngl {}: the forward pass has no GPU backend in this build", ngl);
  const uint32_t n_ctx = c["n_ctx"];
  if (n_ctx < needed_ctx)
    return fmt::format("context {} is smaller than the {} tokens the workload needs", n_ctx, needed_ctx);
  if (int(n_ctx) < spec.min_ctx) return fmt::format("context {} is below --min-ctx {}", n_ctx, spec.min_ctx);
  if (!memory) return memory.error().message;
  if (spec.max_mem_bytes && memory->total() > *spec.max_mem_bytes) {
    return fmt::format("predicted {} exceeds --max-mem {}", human_bytes(memory->total()),
                       human_bytes(*spec.max_mem_bytes));
  }
  return {};
}

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

Result<SweepPlan> plan_sweep(const SweepSpec& s, const ModelShapeFn& shapes, bool has_gpu) {
  SweepPlan plan;
  plan.spec_hash = s.hash();
  std::vector<std::vector<PlannedTrial>> by_group;
  std::set<std::string> seen;  // coincidence keys: settings that coincide (ub > b, b past the largest decode, c 0 and c = needed) run once
  for (const Variant& v : variants(s)) {
    auto shape = shapes(v.path, v.quant);
    if (!shape) return shape.error();
    for (int ngl : s.n_gpu_layers) {
      for (bool mmap : s.mmap) {
        TrialGroup group;
        group.key = {{"model", v.path}, {"quant", v.quant}, {"n_gpu_layers", ngl}, {"mmap", mmap}};
        std::vector<PlannedTrial> trials;
        const std::array<size_t, 11> sizes{s.threads.size(),      s.threads_batch.size(), s.numa.size(),
                                           s.cpu_mask.size(),     s.ctx_size.size(),      s.batch_size.size(),
                                           s.ubatch_size.size(),  s.parallel.size(),      s.cache_type_k.size(),
                                           s.cache_type_v.size(), s.flash_attn.size()};
        for (const Workload& w : s.workloads) {
          for_each_index(sizes, [&](const std::array<size_t, 11>& i) {
            // A batched workload brings its own -np: only the first value of the dimension is used.
            if (w.kind == WorkloadKind::Batched && i[7] != 0) return;
            const WorkloadNeeds need = needs(w);
            const int np = w.kind == WorkloadKind::Batched ? w.n_parallel : s.parallel[i[7]];
            const int b = s.batch_size[i[5]];
            const int ub = std::min(s.ubatch_size[i[6]], b);  // the engine caps -ub at -b
            const uint32_t ctx = s.ctx_size[i[4]] == 0 ? std::max<uint32_t>(need.ctx, 1) : uint32_t(s.ctx_size[i[4]]);
            nlohmann::json c = group.key;
            c["threads"] = s.threads[i[0]];
            c["threads_batch"] = s.threads_batch[i[1]];
            c["numa"] = s.numa[i[2]];
            c["cpu_mask"] = s.cpu_mask[i[3]];
            c["n_ctx"] = ctx;
            c["n_batch"] = b;
            c["n_ubatch"] = ub;
            c["n_parallel"] = np;
            c["type_k"] = s.cache_type_k[i[8]];
            c["type_v"] = s.cache_type_v[i[9]];
            c["flash_attn"] = s.flash_attn[i[10]];
            c["workload"] = w.to_json();
            PlannedTrial t;
            t.config = c;
            t.hash = config_hash(c);
            t.workload = w.name();
            if (!seen.insert(coincidence_key(c, need)).second) return;
            // The spec's KV type names were checked by resolve_spec.
            const MemoryInputs in{.n_ctx = ctx,
                                  .n_batch = uint32_t(b),
                                  .n_ubatch = uint32_t(ub),
                                  .max_decode_tokens = need.decode_tokens,
                                  .n_outputs = need.outputs,
                                  .type_k = *kv_type_from_name(s.cache_type_k[i[8]]),
                                  .type_v = *kv_type_from_name(s.cache_type_v[i[9]]),
                                  .use_mmap = mmap};
            auto memory = predict_memory(*shape, in);
            if (memory) t.memory = *memory;
            t.skip_reason = skip_reason(s, c, need.ctx, memory, has_gpu);
            trials.push_back(std::move(t));
          });
        }
        plan.groups.push_back(std::move(group));
        by_group.push_back(std::move(trials));
      }
    }
  }
  // Run order.
  std::vector<size_t> group_order(plan.groups.size());
  for (size_t g = 0; g < group_order.size(); ++g) group_order[g] = g;
  SplitMix rng{s.seed};
  if (s.order == TrialOrder::Random) shuffle(group_order, rng);
  std::vector<TrialGroup> groups;
  for (size_t g : group_order) {
    auto& trials = by_group[g];
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
