#include "sweeps/spec/spec_flags.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "engine/settings/settings_table.h"

namespace infertune {

namespace {

struct SpecFlag {
  std::string_view key;    // the spec key
  std::string_view names;  // CLI11 names (-pg arrives rewritten: sweep_flag_aliases)
  std::string_view shown;  // the name errors use
  std::string_view help;
};

constexpr std::array kFlags{
    SpecFlag{"models", "-m,--model", "-m", "GGUF model file(s)"},
    SpecFlag{"base_model", "--base-model", "--base-model", "One model to produce each --quant-types variant from"},
    SpecFlag{"quant_types", "--quant-types", "--quant-types", "Weight types of the base model's variants (q4_0,q8_0)"},
    SpecFlag{"n_prompt", "-p,--n-prompt", "-p", "pp workloads: prompt tokens (default 512 with tg 128)"},
    SpecFlag{"n_gen", "-n,--n-gen", "-n", "tg workloads: generated tokens"},
    SpecFlag{"pg", "--pg", "-pg", "-pg PP,TG: a prompt then generation (repeatable)"},
    SpecFlag{"depth", "-d,--n-depth", "-d", "Tokens cached before each pp/tg/pg workload (default 0)"},
    SpecFlag{"batched", "--batched", "--batched", "NP_LIST:PP,TG batched workloads, e.g. 1,2,4:128,64"},
    SpecFlag{"serve", "--serve", "--serve",
             "C_LIST:PP,TG served workloads: C clients against the server (its -np slots), e.g. 1,4,8:90,32"},
    SpecFlag{"slo_ttft", "--slo-ttft", "--slo-ttft",
             "Served workloads' goodput objective: time to first token (500ms)"},
    SpecFlag{"slo_itl", "--slo-itl", "--slo-itl", "Served workloads' goodput objective: time per output token (100ms)"},
    SpecFlag{"max_mem", "--max-mem", "--max-mem", "Skip configurations predicted to need more (8G, 512M)"},
    SpecFlag{"min_ctx", "--min-ctx", "--min-ctx",
             "Skip configurations with a smaller -c; also the least context the recommended command lines carry"},
    SpecFlag{"time_budget", "--time-budget", "--time-budget", "For the whole sweep (90s, 30m, 2h)"},
    SpecFlag{"order", "--order", "--order", "grouped (default), interleaved, random or random:SEED"},
    SpecFlag{
        "engine", "--engine", "--engine",
        "What runs the trials: infertune (default) or llama.cpp (its llama-bench, llama-batched-bench, llama-server)"},
    SpecFlag{"llama_cpp_bin", "--llama-cpp-bin", "--llama-cpp-bin",
             "--engine llama.cpp: the folder of llama-bench, llama-batched-bench and llama-server"},
    SpecFlag{"max_quality_loss", "--max-quality-loss", "--max-quality-loss",
             "The recommendation's quality budget: perplexity over the base (1%), for quantization variants"},
    SpecFlag{"max_kld", "--max-kld", "--max-kld",
             "The recommendation's quality budget: mean KL divergence from the base (0.05)"},
};

}  // namespace

bool SpecFlagText::any() const {
  const auto given = [](const auto& kv) { return !kv.second.empty(); };
  return std::ranges::any_of(values, given) || std::ranges::any_of(settings.occurrences, given);
}

void add_sweep_spec_flags(CLI::App& app, SpecFlagText& text) {
  for (const SpecFlag& f : kFlags) {
    app.add_option(std::string(f.names), text.values[std::string(f.key)], std::string(f.help))
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->group("Models, workloads and constraints (comma lists and ranges, as in bench)");
  }
  add_setting_list_flags(app, Command::sweep, text.settings);
}

std::vector<FlagAlias> sweep_flag_aliases() {
  std::vector<FlagAlias> aliases = setting_flag_aliases(Command::sweep);
  aliases.push_back({"-pg", "--pg"});
  return aliases;
}

SpecText merge_spec_flags(SpecText base, const SpecFlagText& flags) {
  // Workloads given as flags replace the spec's `workloads:` list too.
  for (std::string_view key : {"n_prompt", "n_gen", "pg", "depth", "batched", "serve"}) {
    auto it = flags.values.find(std::string(key));
    if (it != flags.values.end() && !it->second.empty()) base.workloads.clear();
  }
  for (const SpecFlag& f : kFlags) {
    auto it = flags.values.find(std::string(f.key));
    if (it == flags.values.end() || it->second.empty()) continue;
    base.entries[std::string(f.key)] = SpecEntry{.values = it->second, .where = std::string(f.shown)};
  }
  for (const auto& [key, occurrences] : flags.settings.occurrences) {
    const Setting* setting = find_setting(key);
    if (occurrences.empty() || !setting) continue;
    base.entries[key] = SpecEntry{.values = occurrences, .where = std::string(setting->shown_flag())};
  }
  return base;
}

}  // namespace infertune
