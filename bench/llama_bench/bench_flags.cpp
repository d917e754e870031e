#include "bench/llama_bench/bench_flags.h"

#include <fmt/format.h>

#include <array>
#include <optional>

#include "bench/llama_bench/context_setup.h"
#include "engine/settings/value_lists.h"
#include "engine/cli/flag_ranges.h"
#include "engine/threading/cpu_set.h"
#include "engine/threading/placement_flags.h"
#include "kernels/ggml_type.h"

namespace infertune {
namespace {

constexpr std::array kAliases{
    FlagAlias{"-pg", "--pg"},
    FlagAlias{"-ub", "--ubatch-size"},
    FlagAlias{"-ngl", "--n-gpu-layers"},
    FlagAlias{"-ctk", "--cache-type-k"},
    FlagAlias{"-ctv", "--cache-type-v"},
    FlagAlias{"-fa", "--flash-attn"},
    FlagAlias{"-mmp", "--mmap"},
};

constexpr const char* kTestGroup = "Test parameters (comma lists and ranges first-last+step / first-last*mult)";

void add_list(CLI::App& app, const std::string& names, std::vector<std::string>& into, const std::string& help) {
  app.add_option(names, into, help)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(kTestGroup);
}

// A list flag that was not given takes its default; one that was must have every value in `allowed`.
Status assign_ints(const std::vector<std::string>& text, const char* flag, const IntRange& allowed,
                   std::vector<int>& into) {
  if (text.empty()) return {};
  auto values = parse_int_list(text, flag, allowed);
  if (!values) return values.error();
  into = std::move(*values);
  return {};
}

Status assign_bools(const std::vector<std::string>& text, const char* flag, std::vector<bool>& into) {
  if (text.empty()) return {};
  auto values = parse_bool_list(text, flag);
  if (!values) return values.error();
  into = std::move(*values);
  return {};
}

// KV types by ggml name, normalized to ggml's spelling ("Q8_0" -> "q8_0"); unknown names are bad input,
// known ones the engine lacks become error rows later (context_setup.h).
Status assign_kv_types(const std::vector<std::string>& text, const char* flag, std::vector<std::string>& into) {
  if (text.empty()) return {};
  auto words = parse_word_list(text, flag);
  if (!words) return words.error();
  into.clear();
  for (const std::string& word : *words) {
    auto type = ggml_type_from_name(word);
    if (!type) return fail("{}: unknown type '{}' (KV cache types: f32, f16, bf16, q8_0, q4_0, ...)", flag, word);
    into.emplace_back(ggml_type_name(*type));
  }
  return {};
}

Status assign_flash_attn(const std::vector<std::string>& text, std::vector<FlashAttn>& into) {
  if (text.empty()) return {};
  auto words = parse_word_list(text, "-fa");
  if (!words) return words.error();
  into.clear();
  for (const std::string& w : *words) {
    if (w == "on" || w == "1") {
      into.push_back(FlashAttn::on);
    } else if (w == "off" || w == "0") {
      into.push_back(FlashAttn::off);
    } else if (w == "auto" || w == "-1") {
      into.push_back(FlashAttn::autodetect);
    } else {
      return fail("-fa: '{}' is not on, off or auto", w);
    }
  }
  return {};
}

// Each mask must name CPUs of this machine only (as `run -C` checks), so a typo is refused before any model
// is loaded rather than narrowed with a warning in every test.
Status assign_cpu_masks(const std::vector<std::string>& text, const MachineCpus& machine,
                        std::vector<std::string>& into) {
  if (text.empty()) return {};
  auto words = parse_word_list(text, "-C");
  if (!words) return words.error();
  into.clear();
  std::optional<CpuSet> machine_cpus;
  for (const std::string& w : *words) {
    if (w == "0x0" || w == "0") {  // llama-bench's "no mask"
      into.emplace_back();
      continue;
    }
    if (auto mask = parse_cpu_mask(w); !mask) return fail("-C: {}", mask.error().message);
    if (!machine_cpus) {
      auto cpus = machine();
      if (!cpus) return fail("-C: {}", cpus.error().message);
      machine_cpus = std::move(*cpus);
    }
    if (Status fits = check_cpu_mask_fits(w, *machine_cpus); !fits) return fail("-C: {}", fits.error().message);
    into.push_back(w);
  }
  return {};
}

Result<OutputFormat> parse_output(const std::string& text) {
  for (OutputFormat f :
       {OutputFormat::markdown, OutputFormat::csv, OutputFormat::json, OutputFormat::jsonl, OutputFormat::sql}) {
    if (text == output_format_name(f)) return f;
  }
  return fail("-o: unknown format '{}' (md, csv, json, jsonl, sql)", text);
}

Status resolve_lists(const BenchFlagText& t, const MachineCpus& machine, BenchParams& p) {
  auto models = parse_word_list(t.models, "-m");
  if (!models) return models.error();
  p.models = std::move(*models);
  constexpr int kMaxTokens = 1 << 24;
  if (Status s = assign_ints(t.n_prompt, "-p", {.low = 0, .high = kMaxTokens, .note = "0 = no pp test"}, p.n_prompt);
      !s)
    return s;
  if (Status s = assign_ints(t.n_gen, "-n", {.low = 0, .high = kMaxTokens, .note = "0 = no tg test"}, p.n_gen); !s)
    return s;
  if (Status s = assign_ints(t.n_depth, "-d", {.low = 0, .high = kMaxTokens}, p.n_depth); !s) return s;
  if (Status s = assign_ints(t.n_batch, "-b", {.low = 1, .high = kMaxTokens}, p.n_batch); !s) return s;
  if (Status s = assign_ints(t.n_ubatch, "-ub", {.low = 1, .high = kMaxTokens}, p.n_ubatch); !s) return s;
  const IntRange threads{.low = 0, .high = kMaxThreads, .note = "0 = the number of physical cores"};
  if (Status s = assign_ints(t.n_threads, "-t", threads, p.n_threads); !s) return s;
  if (Status s = assign_ints(t.poll, "--poll", {.low = 0, .high = 100}, p.poll); !s) return s;
  if (Status s = assign_ints(t.n_gpu_layers, "-ngl", {.low = -1, .high = 100000}, p.n_gpu_layers); !s) return s;
  if (Status s = assign_bools(t.cpu_strict, "--cpu-strict", p.cpu_strict); !s) return s;
  if (Status s = assign_bools(t.use_mmap, "-mmp", p.use_mmap); !s) return s;
  if (Status s = assign_kv_types(t.type_k, "-ctk", p.type_k); !s) return s;
  if (Status s = assign_kv_types(t.type_v, "-ctv", p.type_v); !s) return s;
  if (Status s = assign_flash_attn(t.flash_attn, p.flash_attn); !s) return s;
  if (Status s = assign_cpu_masks(t.cpu_mask, machine, p.cpu_mask); !s) return s;
  auto pairs = parse_pair_list(t.n_pg, "-pg");
  if (!pairs) return pairs.error();
  for (const auto& [pp, tg] : *pairs) {
    if (pp > kMaxTokens || tg > kMaxTokens) return fail("-pg: {},{} is too large", pp, tg);
  }
  p.n_pg = std::move(*pairs);
  return {};
}

}  // namespace

void add_bench_flags(CLI::App& app, BenchFlagText& t) {
  add_list(app, "-m,--model", t.models, "GGUF model file(s)");
  app.get_option("--model")->required();
  add_list(app, "-p,--n-prompt", t.n_prompt, "Prompt tokens of a pp test (default 512; 0: no pp test)");
  add_list(app, "-n,--n-gen", t.n_gen, "Generated tokens of a tg test (default 128; 0: no tg test)");
  add_list(app, "--pg", t.n_pg, "-pg pp,tg: a prompt followed by generation, timed together (repeatable)");
  add_list(app, "-d,--n-depth", t.n_depth, "Tokens already in the KV cache when the test starts (default 0)");
  add_list(app, "-b,--batch-size", t.n_batch,
           "Logical batch: the prompt is decoded in pieces of this size (default 2048)");
  add_list(app, "--ubatch-size", t.n_ubatch, "-ub: physical batch the engine splits a piece into (default 512)");
  add_list(app, "--cache-type-k", t.type_k, fmt::format("-ctk: KV cache type of K (default {})", default_kv_type()));
  add_list(app, "--cache-type-v", t.type_v, fmt::format("-ctv: KV cache type of V (default {})", default_kv_type()));
  add_list(app, "-t,--threads", t.n_threads, "Threads (default 0: the number of physical cores)");
  add_list(app, "-C,--cpu-mask", t.cpu_mask, "CPUs: a hex mask or a range without commas (default 0x0: all)");
  add_list(app, "--cpu-strict", t.cpu_strict, "1: pin each thread to its own CPU (default 0)");
  add_list(app, "--poll", t.poll, "0..100: how long waiting threads spin before sleeping (default 50)");
  add_list(app, "--n-gpu-layers", t.n_gpu_layers, "-ngl: layers on the GPU (default 0; > 0 needs a GPU backend)");
  add_list(app, "--flash-attn", t.flash_attn, "-fa on|off|auto (default auto)");
  add_list(app, "--mmap", t.use_mmap, "-mmp 0|1: memory-map the model (default 1)");
  app.add_option("--numa", t.numa, "distribute|isolate|numactl (default: none)");
  app.add_option("-r,--repetitions", t.repetitions, "Timed repetitions of each test (default 5)")
      ->transform(int_flag_range({.low = 1, .high = 100000}));
  app.add_option("--prio", t.priority, "Thread priority 0..3 (default 0)")
      ->transform(int_flag_range({.low = 0, .high = 3, .note = "0 normal, 1 medium, 2 high, 3 realtime"}));
  app.add_option("--delay", t.delay_seconds, "Seconds to sleep before each test (default 0)")
      ->transform(int_flag_range({.low = 0, .high = 3600}));
  app.add_flag("--no-warmup", t.no_warmup, "Skip the untimed warmup run of each test");
  app.add_option("-o,--output", t.output, "Output format: md, csv, json, jsonl, sql (default md)");
  app.add_flag("--no-probe", t.no_probe, "Do not read or measure the host probe (roofline % stays empty)");
  app.add_flag("--progress", t.progress, "Print a line per step on stderr");
}

Result<BenchParams> resolve_bench_params(const BenchFlagText& t, const MachineCpus& machine) {
  BenchParams p;
  if (Status s = resolve_lists(t, machine, p); !s) return s.error();
  if (!t.numa.empty()) {
    auto numa = parse_numa_mode(t.numa);
    if (!numa) return numa.error();
    p.numa = *numa;
  }
  auto output = parse_output(t.output);
  if (!output) return output.error();
  p.output = *output;
  p.priority = t.priority;
  p.repetitions = t.repetitions;
  p.delay_seconds = t.delay_seconds;
  p.warmup = !t.no_warmup;
  p.probe = !t.no_probe;
  p.progress = t.progress;
  return p;
}

std::span<const FlagAlias> bench_flag_aliases() { return kAliases; }

}  // namespace infertune
