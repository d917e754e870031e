#include "bench/llama_bench/bench_flags.h"

#include <fmt/format.h>

#include "engine/cli/flag_ranges.h"
#include "engine/settings/value_lists.h"

namespace infertune {
namespace {

constexpr const char* kTestGroup = "Test parameters (comma lists and ranges first-last+step / first-last*mult)";
constexpr int kMaxTokens = 1 << 24;

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

Result<OutputFormat> parse_output(const std::string& text, const char* flag) {
  for (OutputFormat f :
       {OutputFormat::markdown, OutputFormat::csv, OutputFormat::json, OutputFormat::jsonl, OutputFormat::sql}) {
    if (text == output_format_name(f)) return f;
  }
  return fail("{}: unknown format '{}' (md, csv, json, jsonl, sql)", flag, text);
}

Status resolve_outputs(const BenchFlagText& t, BenchParams& p) {
  auto output = parse_output(t.output, "-o");
  if (!output) return output.error();
  p.output = *output;
  if (t.output_err.empty() || t.output_err == "none") return {};
  auto output_err = parse_output(t.output_err, "-oe");
  if (!output_err) return output_err.error();
  p.output_err = *output_err;
  return {};
}

Status resolve_workloads(const BenchFlagText& t, BenchParams& p) {
  auto models = parse_word_list(t.models, "-m");
  if (!models) return models.error();
  if (models->empty()) return fail("-m: no model given (-m FILE.gguf; a comma list or -m again for more)");
  p.models = std::move(*models);
  if (Status s = assign_ints(t.n_prompt, "-p", {.low = 0, .high = kMaxTokens, .note = "0 = no pp test"}, p.n_prompt);
      !s)
    return s;
  if (Status s = assign_ints(t.n_gen, "-n", {.low = 0, .high = kMaxTokens, .note = "0 = no tg test"}, p.n_gen); !s)
    return s;
  if (Status s = assign_ints(t.n_depth, "-d", {.low = 0, .high = kMaxTokens}, p.n_depth); !s) return s;
  auto pairs = parse_pair_list(t.n_pg, "-pg");
  if (!pairs) return pairs.error();
  for (const auto& [pp, tg] : *pairs) {
    if (pp > kMaxTokens || tg > kMaxTokens) return fail("-pg: {},{} is too large", pp, tg);
  }
  p.n_pg = std::move(*pairs);
  return {};
}

// llama-bench's -nkvo 0,1 (1: the K/V cache stays in CPU memory) as --kv-offload values (the inverse), and its
// -lm (load mode) as -mmp values: auto and mmap map the file (1), none reads it (0). llama.cpp's mlock and
// direct-I/O modes are refused by name: infertune has neither.
Status translate_llama_bench_lists(const BenchFlagText& t, SettingText& settings) {
  auto no_kv_offload = parse_word_list(t.no_kv_offload, "-nkvo");
  if (!no_kv_offload) return no_kv_offload.error();
  for (const std::string& v : *no_kv_offload) {
    if (v != "0" && v != "1") return fail("-nkvo: '{}' is not 0 or 1", v);
    settings.occurrences["kv_offload"].push_back(v == "1" ? "0" : "1");
  }
  auto load_mode = parse_word_list(t.load_mode, "-lm");
  if (!load_mode) return load_mode.error();
  std::vector<std::string>& mmap = settings.occurrences["mmap"];
  if (!load_mode->empty() && !mmap.empty()) return fail("-lm and -mmp: give one of them");
  for (const std::string& v : *load_mode) {
    if (v != "auto" && v != "mmap" && v != "none") {
      return fail("-lm: '{}' is not supported (auto or mmap: map the file; none: read it into memory)", v);
    }
    mmap.push_back(v == "none" ? "0" : "1");
  }
  return {};
}

// Each -C mask must name CPUs of this machine only (as `run -C` checks), so a typo is refused before any
// model is loaded rather than narrowed with a warning in every test.
Status resolve_settings(const BenchFlagText& t, const MachineCpus& machine, BenchParams& p) {
  SettingText text = t.settings;
  if (Status s = translate_llama_bench_lists(t, text); !s) return s;
  auto given = parse_setting_text(text, Command::bench);
  if (!given) return given.error();
  if (Status s = check_settings_on_machine(*given, machine); !s) return s;
  for (auto& [key, values] : *given) p.settings[key] = std::move(values);
  return {};
}

}  // namespace

void add_bench_flags(CLI::App& app, BenchFlagText& t) {
  add_list(app, "-m,--model", t.models, "GGUF model file(s) (required)");
  add_list(app, "-p,--n-prompt", t.n_prompt, "Prompt tokens of a pp test (default 512; 0: no pp test)");
  add_list(app, "-n,--n-gen", t.n_gen, "Generated tokens of a tg test (default 128; 0: no tg test)");
  add_list(app, "--pg", t.n_pg, "-pg pp,tg: a prompt followed by generation, timed together (repeatable)");
  add_list(app, "-d,--n-depth", t.n_depth, "Tokens already in the KV cache when the test starts (default 0)");
  add_setting_list_flags(app, Command::bench, t.settings);
  add_list(app, "--no-kv-offload", t.no_kv_offload,
           "llama-bench's -nkvo: 1 keeps the GPU layers' K/V cache in CPU memory (the inverse of --kv-offload); a "
           "comma list");
  add_list(app, "--load-mode", t.load_mode,
           "llama-bench's -lm: auto or mmap map the model (-mmp 1), none reads it (-mmp 0); a comma list");
  app.add_option("-r,--repetitions", t.repetitions, "Timed repetitions of each test (default 5)")
      ->transform(int_flag_range({.low = 1, .high = 100000}));
  app.add_option("--delay", t.delay_seconds, "Seconds to sleep before each test (default 0)")
      ->transform(int_flag_range({.low = 0, .high = 3600}));
  app.add_flag("--no-warmup", t.no_warmup, "Skip the untimed warmup run of each test");
  app.add_option("-o,--output", t.output, "Output format: md, csv, json, jsonl, sql (default md)");
  app.add_option("--output-err", t.output_err,
                 "-oe: the results again on stderr, in this format: md, csv, json, jsonl, sql (default none)");
  app.add_flag("--list-devices", t.list_devices, "List the CUDA devices bench can offload to, then exit");
  app.add_flag("-v,--verbose", t.verbose,
               "Print each model's load and each test's engine settings and thread placement on stderr");
  app.add_flag("--no-probe", t.no_probe, "Do not read or measure the host probe (roofline % stays empty)");
  app.add_flag("--progress", t.progress, "Print a line per step on stderr");
  app.add_flag("--profile", t.profile,
               "Time every op of the forward pass in the timed repetitions; print where a step's time goes "
               "(stderr)");
  add_foreign_flags(app, llama_bench_only_flags(), t.llama_bench_only);
}

Result<BenchParams> resolve_bench_params(const BenchFlagText& t, const MachineCpus& machine) {
  BenchParams p;
  if (Status s = resolve_workloads(t, p); !s) return s.error();
  if (Status s = resolve_settings(t, machine, p); !s) return s.error();
  if (Status s = check_foreign_flags(llama_bench_only_flags(), t.llama_bench_only); !s) return s.error();
  if (Status s = resolve_outputs(t, p); !s) return s.error();
  p.repetitions = t.repetitions;
  p.delay_seconds = t.delay_seconds;
  p.warmup = !t.no_warmup;
  p.probe = !t.no_probe;
  p.progress = t.progress;
  p.profile = t.profile;
  p.verbose = t.verbose;
  return p;
}

std::vector<FlagAlias> bench_flag_aliases() {
  std::vector<FlagAlias> aliases = setting_flag_aliases(Command::bench);
  aliases.push_back({"-pg", "--pg"});
  aliases.push_back({"-nkvo", "--no-kv-offload"});
  aliases.push_back({"-lm", "--load-mode"});
  aliases.push_back({"-oe", "--output-err"});
  for (const FlagAlias& alias : foreign_flag_aliases(llama_bench_only_flags())) aliases.push_back(alias);
  return aliases;
}

}  // namespace infertune
