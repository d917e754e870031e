#include "sweeps/trial/trial_config.h"

#include <fmt/format.h>

#include <array>
#include <string>
#include <string_view>

#include "engine/batch/seq_set.h"
#include "engine/kv/kv_storage.h"

namespace infertune {
namespace {

// Token counts and sizes above this are typos, not configurations (as the spec's own cap).
constexpr int64_t kMaxCount = 1 << 22;

Result<const nlohmann::json*> field(const nlohmann::json& object, std::string_view key, std::string_view where) {
  auto it = object.find(key);
  if (it == object.end()) return fail("config field '{}{}' is missing", where, key);
  return &*it;
}

Result<int64_t> integer(const nlohmann::json& object, std::string_view key, int64_t min, int64_t max,
                        std::string_view where = "") {
  auto v = field(object, key, where);
  if (!v) return v.error();
  if (!(*v)->is_number_integer()) {
    return fail("config field '{}{}': expected an integer, got {}", where, key, (*v)->dump());
  }
  const auto n = (*v)->get<int64_t>();
  if (n < min || n > max) return fail("config field '{}{}': {} is outside {}..{}", where, key, n, min, max);
  return n;
}

Result<std::string> text(const nlohmann::json& object, std::string_view key, std::string_view where = "") {
  auto v = field(object, key, where);
  if (!v) return v.error();
  if (!(*v)->is_string()) return fail("config field '{}{}': expected a string, got {}", where, key, (*v)->dump());
  return (*v)->get<std::string>();
}

Result<GgmlType> kv_type(const nlohmann::json& config, std::string_view key) {
  auto name = text(config, key);
  if (!name) return name.error();
  auto type = kv_type_from_name(*name);
  if (!type) return fail("config field '{}': {}", key, type.error().message);
  return *type;
}

Status placement(const nlohmann::json& c, PlacementOptions& p) {
  auto threads = integer(c, "threads", 0, kMaxThreads);
  if (!threads) return threads.error();
  auto threads_batch = integer(c, "threads_batch", 0, kMaxThreads);
  if (!threads_batch) return threads_batch.error();
  // 0 is the spec's "pick for me" (physical cores; -tb: as -t), the engine's kAutoThreads.
  p.threads = *threads > 0 ? static_cast<int>(*threads) : kAutoThreads;
  p.threads_batch = *threads_batch > 0 ? static_cast<int>(*threads_batch) : kAutoThreads;
  auto numa = text(c, "numa");
  if (!numa) return numa.error();
  auto mode = parse_numa_mode(*numa);
  if (!mode) return fail("config field 'numa': {}", mode.error().message);
  p.numa = *mode;
  auto mask = text(c, "cpu_mask");
  if (!mask) return mask.error();
  p.cpu_mask = *mask == "0x0" || *mask == "0" ? std::string() : *mask;  // llama-bench's "no mask"
  if (Status s = validate(p); !s) return fail("config field 'threads' / 'cpu_mask': {}", s.error().message);
  return {};
}

Result<WorkloadKind> workload_kind(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, WorkloadKind>, 4> kKinds{
      {{"pp", WorkloadKind::Prompt},
       {"tg", WorkloadKind::Generate},
       {"pp+tg", WorkloadKind::PromptGenerate},
       {"batched", WorkloadKind::Batched}}};
  for (const auto& [text, kind] : kKinds) {
    if (text == name) return kind;
  }
  return fail("config field 'workload.kind': '{}' is not pp, tg, pp+tg or batched", name);
}

// What each kind needs to be a measurement at all.
Status check_workload(const Workload& w) {
  const bool needs_prompt = w.kind != WorkloadKind::Generate;
  const bool needs_gen = w.kind != WorkloadKind::Prompt;
  if (needs_prompt && w.n_prompt < 1) {
    return fail("config field 'workload.n_prompt': a {} workload needs at least 1 prompt token", w.name());
  }
  if (needs_gen && w.n_gen < 1) {
    return fail("config field 'workload.n_gen': a {} workload needs at least 1 generated token", w.name());
  }
  if (w.kind == WorkloadKind::Batched && w.depth != 0) {
    return fail("config field 'workload.depth': a batched workload takes no depth (got {})", w.depth);
  }
  return {};
}

}  // namespace

Result<Workload> parse_workload(const nlohmann::json& j) {
  if (!j.is_object()) return fail("config field 'workload': expected an object, got {}", j.dump());
  Workload w;
  auto kind_name = text(j, "kind", "workload.");
  if (!kind_name) return kind_name.error();
  auto kind = workload_kind(*kind_name);
  if (!kind) return kind.error();
  w.kind = *kind;
  const std::array<std::pair<const char*, int*>, 4> counts{
      {{"n_prompt", &w.n_prompt}, {"n_gen", &w.n_gen}, {"depth", &w.depth}, {"n_parallel", &w.n_parallel}}};
  for (const auto& [key, into] : counts) {
    auto n = integer(j, key, std::string_view(key) == "n_parallel" ? 1 : 0, kMaxCount, "workload.");
    if (!n) return n.error();
    *into = static_cast<int>(*n);
  }
  if (Status s = check_workload(w); !s) return s.error();
  return w;
}

Result<TrialConfig> parse_trial_config(const nlohmann::json& c) {
  if (!c.is_object()) return fail("trial config: expected a JSON object, got {}", c.dump());
  TrialConfig t;
  if (Status s = placement(c, t.placement); !s) return s.error();
  if (c.contains("n_gpu_layers")) {
    auto ngl = integer(c, "n_gpu_layers", -1, 100000);
    if (!ngl) return ngl.error();
    t.n_gpu_layers = static_cast<int>(*ngl);
  }
  const std::array<std::pair<const char*, uint32_t*>, 4> sizes{
      {{"n_ctx", &t.n_ctx}, {"n_batch", &t.n_batch}, {"n_ubatch", &t.n_ubatch}, {"n_parallel", &t.n_parallel}}};
  for (const auto& [key, into] : sizes) {
    auto n = integer(c, key, 1, std::string_view(key) == "n_parallel" ? int64_t(kMaxSequences) : kMaxCount);
    if (!n) return n.error();
    *into = static_cast<uint32_t>(*n);
  }
  if (t.n_ubatch > t.n_batch) {
    return fail("config field 'n_ubatch': {} is above n_batch {} (the engine splits a batch into ubatches)", t.n_ubatch,
                t.n_batch);
  }
  auto type_k = kv_type(c, "type_k");
  if (!type_k) return type_k.error();
  auto type_v = kv_type(c, "type_v");
  if (!type_v) return type_v.error();
  t.type_k = *type_k;
  t.type_v = *type_v;
  auto fa = text(c, "flash_attn");
  if (!fa) return fa.error();
  auto mode = flash_attention_from_name(*fa);
  if (!mode) return fail("config field 'flash_attn': '{}' is not on, off or auto", *fa);
  t.flash_attn = *mode;
  auto workload = field(c, "workload", "");
  if (!workload) return workload.error();
  auto w = parse_workload(**workload);
  if (!w) return w.error();
  t.workload = *w;
  if (t.workload.kind == WorkloadKind::Batched && uint32_t(t.workload.n_parallel) > t.n_parallel) {
    return fail("config field 'n_parallel': {} is below the batched workload's n_parallel {}", t.n_parallel,
                t.workload.n_parallel);
  }
  return t;
}

}  // namespace infertune
