#pragma once
// What a sweep measures: the values of every dimension, the workloads, and the constraints. Read from a
// YAML spec (spec_yaml.h) or from flags (spec_flags.h), both going through resolve_spec, so the two accept
// the same dimension names, lists and ranges (engine/settings/value_lists.h) and give the same SweepSpec.
// The dimensions are the settings of the settings table the sweep takes (engine/settings/settings_table.h):
// their keys, flags, checks and canonical spellings all come from there.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/settings/setting_flags.h"
#include "kernels/result.h"

namespace infertune {

enum class WorkloadKind { Prompt, Generate, PromptGenerate, Batched, Serve };

// One measured task. Prompt/Generate/PromptGenerate run with `depth` tokens already cached; Batched runs
// `n_parallel` sequences at once, each a prompt of n_prompt then n_gen generated tokens; Serve runs the
// OpenAI-compatible server over the trial's context (its slots: the -np dimension) and `clients` closed-loop
// clients sending it requests of about n_prompt tokens for n_gen generated ones.
struct Workload {
  WorkloadKind kind = WorkloadKind::Prompt;
  int n_prompt = 0;
  int n_gen = 0;
  int depth = 0;
  int n_parallel = 1;  // Batched only (the -np dimension applies to the others)
  int clients = 0;     // Serve only
  // Serve only: goodput counts the requests whose time to first token and mean time per output token are
  // within these (0: no limit).
  double slo_ttft_ms = 0;
  double slo_itl_ms = 0;
  // "pp512", "tg128", "pp512+tg128", "pp512@d4096", "batched np4 pp128+tg64", "serve c4 pp90+tg32"
  std::string name() const;
  nlohmann::json to_json() const;
};

enum class TrialOrder { Grouped, Interleaved, Random };

// What runs the trials: this engine, or llama.cpp's own benchmark tools (sweeps/trial/llama_cpp_trial.h).
enum class SweepEngine { infertune, llama_cpp };

struct SweepSpec {
  SweepEngine engine = SweepEngine::infertune;  // engine: llama.cpp
  std::string llama_cpp_bin;                    // the folder of llama-bench and llama-batched-bench
  // Either model files, or one base model and the quantization types to produce from it.
  std::vector<std::string> models;
  std::string base_model;
  std::vector<std::string> quant_types;
  // Dimensions: every setting the sweep takes, by its key ("threads", "ctx_size"), as canonical values
  // (Setting::parse), each at least one; a setting not given has its default_value alone.
  SettingValues settings = default_sweep_settings();
  std::vector<Workload> workloads;
  // Constraints.
  std::optional<uint64_t> max_mem_bytes;  // --max-mem
  int min_ctx = 0;                        // --min-ctx: trials with a smaller context are skipped
  std::optional<double> time_budget_s;    // for the whole sweep (the runner enforces it)
  TrialOrder order = TrialOrder::Grouped;
  uint64_t seed = 0;  // --order random:SEED
  // Quality budgets for quantization variants, as recommend's --max-quality-loss (percent of perplexity
  // over the base) and --max-kld: the recommendation the sweep prints and stores applies them.
  std::optional<double> max_quality_loss_pct;
  std::optional<double> max_kld;

  // Canonical form: every field but the quality budgets, sorted keys, the settings typed as setting_json.h
  // spells them; its config_hash is the spec hash. The budgets choose among the trials rather than decide
  // which run, so a budget added to a spec resumes the same sweep.
  nlohmann::json to_json() const;
  std::string hash() const;

  // Every sweep setting at its default value.
  static SettingValues default_sweep_settings();
};

// A dimension's values as text, with where they came from for errors ("-t" or "spec.yaml:4: threads").
struct SpecEntry {
  std::vector<std::string> values;  // occurrences, each a comma list (as a repeated flag)
  std::string where;
};

// Everything a spec source gave, keyed by the dimension's YAML name (is_spec_key).
struct SpecText {
  std::map<std::string, SpecEntry> entries;
  // Workloads given one by one (the YAML `workloads:` list): each a map of pp/tg/depth/np text.
  struct WorkloadText {
    std::map<std::string, std::string> fields;
    std::string where;
  };
  std::vector<WorkloadText> workloads;
};

// Checks and expands the text: lists and ranges, each setting's values as its Setting checks and spells them
// (parse_setting_values), sizes ("8G"), durations ("30m"). Errors name the flag or YAML line and key.
Result<SweepSpec> resolve_spec(const SpecText& text);

// "8G", "512M", "1.5GiB", "123456" (bytes); K/M/G/T are powers of 1024.
Result<uint64_t> parse_byte_size(std::string_view text, std::string_view where);
// "90", "90s", "30m", "2h".
Result<double> parse_duration_s(std::string_view text, std::string_view where);
// "1%", "1" or "0.5 %": a percentage, finite and not negative.
Result<double> parse_percent(std::string_view text, std::string_view where);

// Every YAML key resolve_spec knows: the keys of the settings the sweep takes and the sweep's own (models,
// workloads, constraints). Unknown keys are errors.
bool is_spec_key(std::string_view key);

}  // namespace infertune
