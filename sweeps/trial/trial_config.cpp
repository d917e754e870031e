#include "sweeps/trial/trial_config.h"

#include <fmt/format.h>

#include <array>
#include <string>
#include <string_view>

#include "sweeps/spec/config_fields.h"

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

// What the settings table allows for a setting but a planned trial cannot have: the planner resolves -c 0 to
// the workload's need and caps -ub at -b.
Status check_planned(const ContextParams& c) {
  if (c.n_ctx == 0) return fail("config field 'n_ctx': 0 is not a planned context (the planner resolves -c 0)");
  if (c.n_ubatch > c.n_batch) {
    return fail("config field 'n_ubatch': {} is above n_batch {} (the engine splits a batch into ubatches)", c.n_ubatch,
                c.n_batch);
  }
  return {};
}

Result<WorkloadKind> workload_kind(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, WorkloadKind>, 5> kKinds{
      {{"pp", WorkloadKind::Prompt},
       {"tg", WorkloadKind::Generate},
       {"pp+tg", WorkloadKind::PromptGenerate},
       {"batched", WorkloadKind::Batched},
       {"serve", WorkloadKind::Serve}}};
  for (const auto& [text, kind] : kKinds) {
    if (text == name) return kind;
  }
  return fail("config field 'workload.kind': '{}' is not pp, tg, pp+tg, batched or serve", name);
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
  if ((w.kind == WorkloadKind::Batched || w.kind == WorkloadKind::Serve) && w.depth != 0) {
    return fail("config field 'workload.depth': a {} workload takes no depth (got {})", w.name(), w.depth);
  }
  if (w.kind == WorkloadKind::Serve && w.clients < 1) {
    return fail("config field 'workload.clients': a served workload needs at least 1 client (got {})", w.clients);
  }
  if (w.slo_ttft_ms < 0 || w.slo_itl_ms < 0) {
    return fail("config field 'workload.slo_ttft_ms' / 'slo_itl_ms': {} / {} is negative", w.slo_ttft_ms, w.slo_itl_ms);
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
  const std::array<std::pair<const char*, int*>, 5> counts{{{"n_prompt", &w.n_prompt},
                                                            {"n_gen", &w.n_gen},
                                                            {"depth", &w.depth},
                                                            {"n_parallel", &w.n_parallel},
                                                            {"clients", &w.clients}}};
  for (const auto& [key, into] : counts) {
    // Only a served workload stores its clients (the other kinds' configurations predate it).
    if (std::string_view(key) == "clients" && !j.contains(key) && w.kind != WorkloadKind::Serve) continue;
    auto n = integer(j, key, std::string_view(key) == "n_parallel" ? 1 : 0, kMaxCount, "workload.");
    if (!n) return n.error();
    *into = static_cast<int>(*n);
  }
  for (auto [key, into] : {std::pair{"slo_ttft_ms", &w.slo_ttft_ms}, std::pair{"slo_itl_ms", &w.slo_itl_ms}}) {
    const auto it = j.find(key);
    if (it == j.end()) continue;
    if (!it->is_number()) return fail("config field 'workload.{}': expected a number, got {}", key, it->dump());
    *into = it->get<double>();
  }
  if (Status s = check_workload(w); !s) return s.error();
  return w;
}

Result<TrialConfig> parse_trial_config(const nlohmann::json& c) {
  auto settings = read_config_fields(c);
  if (!settings) return settings.error();
  if (Status s = check_planned(settings->context); !s) return s.error();
  auto workload = field(c, "workload", "");
  if (!workload) return workload.error();
  auto w = parse_workload(**workload);
  if (!w) return w.error();
  const uint32_t n_parallel = settings->context.n_seq_max;
  if (w->kind == WorkloadKind::Batched && uint32_t(w->n_parallel) > n_parallel) {
    return fail("config field 'n_parallel': {} is below the batched workload's n_parallel {}", n_parallel,
                w->n_parallel);
  }
  return TrialConfig{.settings = std::move(*settings), .workload = *w};
}

}  // namespace infertune
