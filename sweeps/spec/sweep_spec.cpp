#include "sweeps/spec/sweep_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string_view>

#include "bench/loadgen/load_options.h"
#include "engine/settings/setting_flags.h"
#include "engine/settings/settings_table.h"
#include "engine/settings/value_lists.h"
#include "kernels/ggml_type.h"
#include "sweeps/spec/setting_json.h"
#include "sweeps/store/stable_hash.h"

namespace infertune {

namespace {

// The spec's own keys; the others are the settings the sweep takes (settings_table.h).
constexpr std::array<std::string_view, 19> kSweepKeys{
    "models",  "base_model", "quant_types",      "n_prompt", "n_gen",        "pg",      "depth",
    "batched", "serve",      "slo_ttft",         "slo_itl",  "max_mem",      "min_ctx", "time_budget",
    "order",   "max_kld",    "max_quality_loss", "engine",   "llama_cpp_bin"};

// A generous cap on token counts and sizes: a typo is an error, not a sweep that cannot run.
constexpr int kMaxTokens = 1 << 22;

// Generous caps on what a spec expands to, for the same reason: a range typed too wide is an error naming the
// count, not a plan that exhausts memory (threads, batch and ubatch of 1-4096 each would be 69 billion trials).
constexpr uint64_t kMaxWorkloads = 4096;
constexpr uint64_t kMaxTrials = 100'000;

const SpecEntry* find(const SpecText& t, const std::string& key) {
  auto it = t.entries.find(key);
  return it == t.entries.end() || it->second.values.empty() ? nullptr : &it->second;
}

// A single-valued key: exactly one occurrence without commas.
Result<std::string> single(const SpecEntry& e) {
  if (e.values.size() != 1 || e.values[0].find(',') != std::string::npos) {
    return fail("{}: takes one value, not a list", e.where);
  }
  return e.values[0];
}

Status ints(const SpecText& t, const std::string& key, std::vector<int>& into, int min, int max) {
  const SpecEntry* e = find(t, key);
  if (!e) return {};
  auto values = parse_int_list(e->values, e->where);
  if (!values) return values.error();
  for (int v : *values) {
    if (v < min || v > max) return fail("{}: {} is outside {}..{}", e->where, v, min, max);
  }
  into = std::move(*values);
  return {};
}

// Word lists checked and spelled canonically by `canon` (nullopt: not accepted, with `accepted` in the error).
template <class Canon>
Status words(const SpecText& t, const std::string& key, std::vector<std::string>& into, Canon canon,
             std::string_view accepted) {
  const SpecEntry* e = find(t, key);
  if (!e) return {};
  auto values = parse_word_list(e->values, e->where);
  if (!values) return values.error();
  into.clear();
  for (const auto& v : *values) {
    std::optional<std::string> c = canon(v);
    if (!c) return fail("{}: '{}' is not one of {}", e->where, v, accepted);
    into.push_back(*c);
  }
  return {};
}

std::optional<std::string> quant_canon(const std::string& v) {
  auto type = ggml_type_from_name(v);
  if (!type) return std::nullopt;
  return std::string(ggml_type_name(*type));
}

Result<int> parse_count(std::string_view text, std::string_view where, std::string_view what) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0 || v > kMaxTokens) {
    return fail("{}: {} '{}' is not a token count 0..{}", where, what, text, kMaxTokens);
  }
  return v;
}

// "LIST:PP,TG" (--batched, --serve): the list, the prompt and the generated tokens; `form` shows it for errors.
struct ListAndPair {
  std::vector<int> list;
  int pp = 0, tg = 0;
};

Result<ListAndPair> list_and_pair(const std::string& text, const std::string& where, std::string_view form) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return fail("{}: '{}' is not {}", where, text, form);
  auto list = parse_int_list({text.substr(0, colon)}, where);
  if (!list) return list.error();
  auto pair = parse_pair_list({text.substr(colon + 1)}, where);
  if (!pair) return pair.error();
  const auto [pp, tg] = pair->front();
  if (pp > kMaxTokens || tg > kMaxTokens) return fail("{}: {},{} is too large", where, pp, tg);
  return ListAndPair{std::move(*list), pp, tg};
}

// --batched NP_LIST:PP,TG, e.g. "1,2,4:128,64": one Batched workload per np value.
Status add_batched(const std::string& text, const std::string& where, std::vector<Workload>& into) {
  auto parsed = list_and_pair(text, where, "NP_LIST:PP,TG (e.g. 1,2,4:128,64)");
  if (!parsed) return parsed.error();
  const auto& [nps, pp, tg] = *parsed;
  for (int np : nps) {
    if (np < 1 || np > 256) return fail("{}: np {} is outside 1..256", where, np);
    into.push_back({.kind = WorkloadKind::Batched, .n_prompt = pp, .n_gen = tg, .n_parallel = np});
  }
  return {};
}

// The service-level objective of served workloads: "500ms", "0.5s", "2" (seconds) as milliseconds.
struct ServeSlo {
  double ttft_ms = 0, itl_ms = 0;
};

Result<double> slo_ms(const std::string& text, const std::string& where) {
  auto seconds = parse_duration_seconds(text);
  if (!seconds) return fail("{}: {}", where, seconds.error().message);
  return 1000.0 * *seconds;
}

// The top-level slo_ttft / slo_itl (--slo-ttft, --slo-itl): the objective of every --serve workload.
Result<ServeSlo> top_level_slo(const SpecText& t) {
  ServeSlo slo;
  for (auto [key, into] : {std::pair{"slo_ttft", &slo.ttft_ms}, std::pair{"slo_itl", &slo.itl_ms}}) {
    const SpecEntry* e = find(t, key);
    if (!e) continue;
    auto text = single(*e);
    if (!text) return text.error();
    auto ms = slo_ms(*text, e->where);
    if (!ms) return ms.error();
    *into = *ms;
  }
  return slo;
}

// --serve C_LIST:PP,TG, e.g. "1,4,8:90,32": one Serve workload per number of clients.
Status add_serve(const std::string& text, const std::string& where, const ServeSlo& slo, std::vector<Workload>& into) {
  auto parsed = list_and_pair(text, where, "C_LIST:PP,TG (e.g. 1,4,8:90,32)");
  if (!parsed) return parsed.error();
  const auto& [clients, pp, tg] = *parsed;
  if (pp < 1 || tg < 1) return fail("{}: a served request needs prompt and generated tokens, not {},{}", where, pp, tg);
  for (int c : clients) {
    if (c < 1 || c > 256) return fail("{}: {} clients is outside 1..256", where, c);
    into.push_back({.kind = WorkloadKind::Serve,
                    .n_prompt = pp,
                    .n_gen = tg,
                    .clients = c,
                    .slo_ttft_ms = slo.ttft_ms,
                    .slo_itl_ms = slo.itl_ms});
  }
  return {};
}

// The flat keys (bench's -p, -n, -pg, -d, and --batched) as workloads: every depth for each pp/tg/pg.
Status flat_workloads(const SpecText& t, std::vector<Workload>& into) {
  std::vector<int> pp, tg, depth{0};
  if (Status s = ints(t, "n_prompt", pp, 0, kMaxTokens); !s) return s;
  if (Status s = ints(t, "n_gen", tg, 0, kMaxTokens); !s) return s;
  if (Status s = ints(t, "depth", depth, 0, kMaxTokens); !s) return s;
  std::vector<std::pair<int, int>> pg;
  if (const SpecEntry* e = find(t, "pg")) {
    auto pairs = parse_pair_list(e->values, e->where);
    if (!pairs) return pairs.error();
    pg = std::move(*pairs);
  }
  const uint64_t per_depth = std::ranges::count_if(pp, [](int n) { return n > 0; }) +
                             std::ranges::count_if(tg, [](int n) { return n > 0; }) + pg.size();
  if (per_depth * depth.size() > kMaxWorkloads) {
    const SpecEntry* e = nullptr;  // the first of these given names where the count came from
    for (const char* key : {"depth", "n_prompt", "n_gen", "pg"}) e = e ? e : find(t, key);
    return fail("{}: the prompt, generation and depth lists give {} workloads (each at every depth); at most {}",
                e->where, per_depth * depth.size(), kMaxWorkloads);
  }
  for (int d : depth) {
    for (int n : pp) {
      if (n > 0) into.push_back({.kind = WorkloadKind::Prompt, .n_prompt = n, .depth = d});
    }
    for (int n : tg) {
      if (n > 0) into.push_back({.kind = WorkloadKind::Generate, .n_gen = n, .depth = d});
    }
    for (auto [p, g] : pg)
      into.push_back({.kind = WorkloadKind::PromptGenerate, .n_prompt = p, .n_gen = g, .depth = d});
  }
  if (const SpecEntry* e = find(t, "batched")) {
    for (const auto& v : e->values) {
      if (Status s = add_batched(v, e->where, into); !s) return s;
    }
  }
  if (const SpecEntry* e = find(t, "serve")) {
    auto slo = top_level_slo(t);
    if (!slo) return slo.error();
    for (const auto& v : e->values) {
      if (Status s = add_serve(v, e->where, *slo, into); !s) return s;
    }
  }
  return {};
}

// A served workload of the YAML list: {clients: "1,4,8", pp: 90, tg: 32, slo_ttft: 500ms, slo_itl: 100ms}.
Status listed_serve(const SpecText::WorkloadText& w, int pp, int tg, int depth, std::vector<Workload>& into) {
  if (depth != 0) return fail("{}: a served workload (clients) takes no depth", w.where);
  if (w.fields.contains("np")) return fail("{}: give np (batched) or clients (served), not both", w.where);
  ServeSlo slo;
  for (auto [key, into_ms] : {std::pair{"slo_ttft", &slo.ttft_ms}, std::pair{"slo_itl", &slo.itl_ms}}) {
    auto it = w.fields.find(key);
    if (it == w.fields.end()) continue;
    auto ms = slo_ms(it->second, fmt::format("{}: {}", w.where, key));
    if (!ms) return ms.error();
    *into_ms = *ms;
  }
  return add_serve(fmt::format("{}:{},{}", w.fields.at("clients"), pp, tg), w.where, slo, into);
}

// One item of the YAML `workloads:` list: {pp: 512}, {tg: 128}, {pp: 512, tg: 128, depth: 4096},
// {np: "1,2,4", pp: 128, tg: 64} (batched), {clients: "1,4", pp: 90, tg: 32, slo_ttft: 500ms} (served).
Status listed_workload(const SpecText::WorkloadText& w, std::vector<Workload>& into) {
  int pp = 0, tg = 0, depth = 0;
  static constexpr std::array<std::string_view, 7> kKeys{"pp", "tg", "depth", "np", "clients", "slo_ttft", "slo_itl"};
  for (const auto& [key, value] : w.fields) {
    if (std::ranges::find(kKeys, key) == kKeys.end()) {
      return fail("{}: unknown workload key '{}' (pp, tg, depth, np, clients, slo_ttft, slo_itl)", w.where, key);
    }
    if (key != "pp" && key != "tg" && key != "depth") continue;
    auto n = parse_count(value, w.where, key);
    if (!n) return n.error();
    (key == "pp" ? pp : key == "tg" ? tg : depth) = *n;
  }
  if (w.fields.contains("clients")) return listed_serve(w, pp, tg, depth, into);
  if (w.fields.contains("slo_ttft") || w.fields.contains("slo_itl")) {
    return fail("{}: slo_ttft and slo_itl belong to a served workload (clients)", w.where);
  }
  if (auto np = w.fields.find("np"); np != w.fields.end()) {
    if (depth != 0) return fail("{}: a batched workload (np) takes no depth", w.where);
    return add_batched(fmt::format("{}:{},{}", np->second, pp, tg), w.where, into);
  }
  if (pp == 0 && tg == 0) return fail("{}: a workload needs pp or tg (or both) > 0", w.where);
  const WorkloadKind kind = pp > 0 && tg > 0 ? WorkloadKind::PromptGenerate
                            : pp > 0         ? WorkloadKind::Prompt
                                             : WorkloadKind::Generate;
  into.push_back({.kind = kind, .n_prompt = pp, .n_gen = tg, .depth = depth});
  return {};
}

Status workloads(const SpecText& t, SweepSpec& s) {
  s.workloads.clear();
  for (const auto& w : t.workloads) {
    if (Status st = listed_workload(w, s.workloads); !st) return st;
  }
  if (Status st = flat_workloads(t, s.workloads); !st) return st;
  if (s.workloads.empty()) {  // bench's defaults
    s.workloads.push_back({.kind = WorkloadKind::Prompt, .n_prompt = 512});
    s.workloads.push_back({.kind = WorkloadKind::Generate, .n_gen = 128});
  }
  if (s.workloads.size() > kMaxWorkloads) {
    return fail("sweep spec: {} workloads; at most {}", s.workloads.size(), kMaxWorkloads);
  }
  return {};
}

// The trials the spec asks for before any is skipped: models x workloads x every dimension's values. The error
// spells the product out ("2 models x 3 workloads x threads 1024 x batch_size 4096 = 25165824 trials").
Status trial_count(const SweepSpec& s) {
  const size_t models = std::max<size_t>(1, std::max(s.models.size(), s.quant_types.size()));
  double trials = static_cast<double>(models) * static_cast<double>(s.workloads.size());  // no overflow
  std::string product = fmt::format("{} models x {} workloads", models, s.workloads.size());
  for (const auto& [key, values] : s.settings) {
    trials *= static_cast<double>(values.size());
    if (values.size() > 1) product += fmt::format(" x {} {}", key, values.size());
  }
  if (trials > kMaxTrials) {
    return fail("sweep spec: {} = {:.0f} trials; at most {}: narrow a range", product, trials, kMaxTrials);
  }
  return {};
}

Status models(const SpecText& t, SweepSpec& s) {
  if (const SpecEntry* e = find(t, "models")) {
    auto files = parse_word_list(e->values, e->where);
    if (!files) return files.error();
    s.models = std::move(*files);
  }
  if (const SpecEntry* e = find(t, "base_model")) {
    auto base = single(*e);
    if (!base) return base.error();
    s.base_model = *base;
  }
  if (Status st = words(t, "quant_types", s.quant_types, quant_canon, "the ggml types (q4_0, q8_0, q4_K, f16, ...)");
      !st)
    return st;
  const bool has_base = !s.base_model.empty();
  if (!s.models.empty() && has_base) return fail("{}: give models or base_model, not both", find(t, "models")->where);
  if (has_base && s.quant_types.empty()) return fail("{}: base_model needs quant_types", find(t, "base_model")->where);
  if (!has_base && !s.quant_types.empty())
    return fail("{}: quant_types needs base_model", find(t, "quant_types")->where);
  if (s.models.empty() && !has_base) return fail("no model: give models (-m) or base_model with quant_types");
  return {};
}

Status order(const SpecEntry& e, SweepSpec& s) {
  auto text = single(e);
  if (!text) return text.error();
  std::string_view v = *text;
  if (v == "grouped") {
    s.order = TrialOrder::Grouped;
  } else if (v == "interleaved") {
    s.order = TrialOrder::Interleaved;
  } else if (v == "random" || v.starts_with("random:") || (v.starts_with("random(") && v.ends_with(")"))) {
    s.order = TrialOrder::Random;
    if (v.size() > 6) {
      const std::string_view digits = v.substr(7, v.size() - 7 - (v.back() == ')' ? 1 : 0));
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), s.seed);
      if (ec != std::errc() || end != digits.data() + digits.size()) {
        return fail("{}: random seed '{}' is not a non-negative integer", e.where, digits);
      }
    }
  } else {
    return fail("{}: '{}' is not grouped, interleaved, random or random:SEED", e.where, v);
  }
  return {};
}

Status constraints(const SpecText& t, SweepSpec& s) {
  if (const SpecEntry* e = find(t, "max_mem")) {
    auto text = single(*e);
    if (!text) return text.error();
    auto bytes = parse_byte_size(*text, e->where);
    if (!bytes) return bytes.error();
    s.max_mem_bytes = *bytes;
  }
  if (const SpecEntry* e = find(t, "min_ctx")) {
    std::vector<int> v;
    if (Status st = ints(t, "min_ctx", v, 0, kMaxTokens); !st) return st;
    if (v.size() != 1) return fail("{}: takes one value, not a list", e->where);
    s.min_ctx = v[0];
  }
  if (const SpecEntry* e = find(t, "time_budget")) {
    auto text = single(*e);
    if (!text) return text.error();
    auto seconds = parse_duration_s(*text, e->where);
    if (!seconds) return seconds.error();
    s.time_budget_s = *seconds;
  }
  if (const SpecEntry* e = find(t, "order")) return order(*e, s);
  return {};
}

Status engine(const SpecText& t, SweepSpec& s) {
  if (const SpecEntry* e = find(t, "engine")) {
    auto text = single(*e);
    if (!text) return text.error();
    if (*text == "infertune") {
      s.engine = SweepEngine::infertune;
    } else if (*text == "llama.cpp" || *text == "llama-cpp") {
      s.engine = SweepEngine::llama_cpp;
    } else {
      return fail("{}: '{}' is not an engine (infertune, llama.cpp)", e->where, *text);
    }
  }
  if (const SpecEntry* e = find(t, "llama_cpp_bin")) {
    auto text = single(*e);
    if (!text) return text.error();
    s.llama_cpp_bin = *text;
  }
  if (s.engine == SweepEngine::llama_cpp && s.llama_cpp_bin.empty()) {
    return fail(
        "{}: engine llama.cpp needs llama_cpp_bin, the folder of llama-bench (scripts/build-llama-cpp builds it)",
        find(t, "engine")->where);
  }
  if (s.engine != SweepEngine::llama_cpp && !s.llama_cpp_bin.empty()) {
    return fail("{}: llama_cpp_bin is for engine: llama.cpp", find(t, "llama_cpp_bin")->where);
  }
  return {};
}

Status quality_budgets(const SpecText& t, SweepSpec& s) {
  if (const SpecEntry* e = find(t, "max_quality_loss")) {
    auto text = single(*e);
    if (!text) return text.error();
    auto percent = parse_percent(*text, e->where);
    if (!percent) return percent.error();
    s.max_quality_loss_pct = *percent;
  }
  if (const SpecEntry* e = find(t, "max_kld")) {
    auto text = single(*e);
    if (!text) return text.error();
    double value = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size() || !std::isfinite(value) || value < 0) {
      return fail("{}: '{}' is not a KL divergence (a number 0 or above, such as 0.05)", e->where, *text);
    }
    s.max_kld = value;
  }
  return {};
}

// Each setting the sweep takes, as its Setting checks and spells it: the same values, errors and ranges
// as bench's lists of the same flags.
Status dimensions(const SpecText& t, SweepSpec& s) {
  for (const Setting* setting : settings_of(Command::sweep)) {
    const SpecEntry* e = find(t, std::string(setting->key));
    if (!e) continue;
    auto values = parse_setting_values(*setting, Command::sweep, e->values, e->where);
    if (!values) return values.error();
    s.settings[std::string(setting->key)] = std::move(*values);
  }
  return {};
}

}  // namespace

bool is_spec_key(std::string_view key) {
  if (std::ranges::find(kSweepKeys, key) != kSweepKeys.end()) return true;
  const Setting* setting = find_setting(key);
  return setting && setting->taken_by(Command::sweep);
}

SettingValues SweepSpec::default_sweep_settings() {
  SettingValues defaults;
  for (const Setting* s : settings_of(Command::sweep)) defaults[std::string(s->key)] = {std::string(s->default_value)};
  return defaults;
}

std::string Workload::name() const {
  switch (kind) {
    case WorkloadKind::Prompt:
      return depth ? fmt::format("pp{}@d{}", n_prompt, depth) : fmt::format("pp{}", n_prompt);
    case WorkloadKind::Generate:
      return depth ? fmt::format("tg{}@d{}", n_gen, depth) : fmt::format("tg{}", n_gen);
    case WorkloadKind::PromptGenerate:
      return depth ? fmt::format("pp{}+tg{}@d{}", n_prompt, n_gen, depth) : fmt::format("pp{}+tg{}", n_prompt, n_gen);
    case WorkloadKind::Batched:
      return fmt::format("batched np{} pp{}+tg{}", n_parallel, n_prompt, n_gen);
    case WorkloadKind::Serve:
      return fmt::format("serve c{} pp{}+tg{}", clients, n_prompt, n_gen);
  }
  return "?";
}

nlohmann::json Workload::to_json() const {
  static constexpr std::array<const char*, 5> kKinds{"pp", "tg", "pp+tg", "batched", "serve"};
  nlohmann::json j{{"kind", kKinds[static_cast<size_t>(kind)]},
                   {"n_prompt", n_prompt},
                   {"n_gen", n_gen},
                   {"depth", depth},
                   {"n_parallel", n_parallel}};
  // Only a served workload has these, so the other kinds' configurations (and their hashes) stay as they were.
  if (kind == WorkloadKind::Serve) {
    j["clients"] = clients;
    j["slo_ttft_ms"] = slo_ttft_ms;
    j["slo_itl_ms"] = slo_itl_ms;
  }
  return j;
}

nlohmann::json SweepSpec::to_json() const {
  nlohmann::json j;
  j["models"] = models;
  j["base_model"] = base_model;
  j["quant_types"] = quant_types;
  // Only a llama.cpp sweep has these, so infertune sweeps keep the hashes they had.
  if (engine == SweepEngine::llama_cpp) {
    j["engine"] = "llama.cpp";
    j["llama_cpp_bin"] = llama_cpp_bin;
  }
  for (const auto& [key, values] : settings) {
    const Setting* setting = find_setting(key);
    // A setting added to the sweep after schema v2 enters the hash only when set, so old specs keep theirs.
    if (setting && !setting->stored_when_default && values == std::vector{std::string(setting->default_value)}) {
      continue;
    }
    nlohmann::json list = nlohmann::json::array();
    for (const std::string& v : values) list.push_back(setting ? setting_json(*setting, v) : nlohmann::json(v));
    j[key] = std::move(list);
  }
  j["workloads"] = nlohmann::json::array();
  for (const auto& w : workloads) j["workloads"].push_back(w.to_json());
  j["max_mem_bytes"] = max_mem_bytes ? nlohmann::json(*max_mem_bytes) : nlohmann::json(nullptr);
  j["min_ctx"] = min_ctx;
  j["time_budget_s"] = time_budget_s ? nlohmann::json(*time_budget_s) : nlohmann::json(nullptr);
  static constexpr std::array<const char*, 3> kOrders{"grouped", "interleaved", "random"};
  j["order"] = kOrders[static_cast<size_t>(order)];
  j["seed"] = seed;
  return j;
}

std::string SweepSpec::hash() const { return config_hash(to_json()); }

Result<SweepSpec> resolve_spec(const SpecText& text) {
  for (const auto& [key, entry] : text.entries) {
    if (!is_spec_key(key)) return fail("{}: unknown key '{}'", entry.where, key);
  }
  SweepSpec s;
  if (Status st = models(text, s); !st) return st.error();
  if (Status st = dimensions(text, s); !st) return st.error();
  if (Status st = workloads(text, s); !st) return st.error();
  if (Status st = constraints(text, s); !st) return st.error();
  if (Status st = quality_budgets(text, s); !st) return st.error();
  if (Status st = engine(text, s); !st) return st.error();
  if (Status st = trial_count(s); !st) return st.error();
  return s;
}

Result<uint64_t> parse_byte_size(std::string_view text, std::string_view where) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit(end, text.data() + text.size() - end);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.remove_suffix(1);
  if (unit.size() == 2 && unit.back() == 'i') unit.remove_suffix(1);
  const std::string_view units = "KMGT";
  double scale = 1;
  if (unit.size() == 1 && units.find(static_cast<char>(std::toupper(unit[0]))) != std::string_view::npos) {
    scale = std::pow(1024.0, 1 + units.find(static_cast<char>(std::toupper(unit[0]))));
  } else if (!unit.empty()) {
    ec = std::errc::invalid_argument;
  }
  if (ec != std::errc() || !(value > 0) || value * scale > 1e18) {
    return fail("{}: '{}' is not a memory size (bytes, or with K, M, G, T: 8G, 512MiB)", where, text);
  }
  return static_cast<uint64_t>(value * scale);
}

Result<double> parse_percent(std::string_view text, std::string_view where) {
  std::string_view number = text;
  while (!number.empty() && number.back() == ' ') number.remove_suffix(1);
  if (!number.empty() && number.back() == '%') number.remove_suffix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || !std::isfinite(value) ||
      value < 0) {
    return fail("{} '{}': expected a percentage such as 1% or 0.5", where, text);
  }
  return value;
}

Result<double> parse_duration_s(std::string_view text, std::string_view where) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string_view unit(end, text.data() + text.size() - end);
  const double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  if (ec != std::errc() || scale == 0 || !(value > 0) || !std::isfinite(value * scale)) {
    return fail("{}: '{}' is not a duration (seconds, or 90s, 30m, 2h)", where, text);
  }
  return value * scale;
}

}  // namespace infertune
