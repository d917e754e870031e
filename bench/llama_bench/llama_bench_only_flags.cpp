#include "bench/llama_bench/llama_bench_only_flags.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "engine/settings/value_lists.h"

namespace infertune {
namespace {

constexpr const char* kGroup = "llama-bench flags of features infertune does not have (their defaults only)";

struct LlamaBenchOnlyFlag {
  std::string_view name;                   // the long form: "--n-cpu-moe"
  std::vector<std::string_view> aliases;   // the short forms llama-bench also takes: "-ncmoe"
  std::string_view feature;                // what the flag is for: "keeping MoE experts on the CPU"
  std::vector<std::string_view> accepted;  // llama-bench's default (empty: the flag is off unless given)
  std::string_view instead;                // what infertune offers instead
};

const std::vector<LlamaBenchOnlyFlag>& llama_bench_only_flags() {
  static const std::vector<LlamaBenchOnlyFlag> flags{
      {"--n-cpu-moe",
       {"-ncmoe"},
       "keeping MoE experts on the CPU",
       {"0"},
       "infertune runs dense models: llama, qwen2, gemma3"},
      {"--device",
       {"-dev"},
       "choosing devices by name",
       {"auto"},
       "-ngl, -sm, -mg and -ts place layers on the CUDA devices; -ngl 0 runs on the CPU only"},
      {"--lazy-mode",
       {"-lzm"},
       "a choice of lazy tensor reading",
       {"auto"},
       "-mmp 1, the default, maps the file and reads pages as they are first used"},
      {"--embeddings", {"-embd"}, "embeddings output", {"0"}, "bench measures with logits, as llama-bench by default"},
      {"--override-tensor", {"-ot"}, "placing tensors by name pattern", {}, "-ngl places whole layers on the GPU"},
      {"--no-op-offload",
       {"-nopo"},
       "a choice of whether a CPU layer's batch operations may run on the GPU",
       {"0"},
       "-ngl decides where each layer runs"},
      {"--no-host", {}, "a choice of host buffer types", {"0"}, "bench uses the engine's own buffers"},
      {"--fit-target",
       {"-fitt"},
       "fitting the model to device memory with a margin",
       {},
       "-ngl auto offloads the most layers that fit the GPU"},
      {"--fit-ctx",
       {"-fitc"},
       "fitting the model to device memory with a margin",
       {},
       "-ngl auto offloads the most layers that fit the GPU"},
      {"--hf-repo",
       {"-hf", "-hfr"},
       "downloading the model from Hugging Face",
       {},
       "download the GGUF file and give it with -m"},
      {"--hf-file",
       {"-hff"},
       "downloading the model from Hugging Face",
       {},
       "download the GGUF file and give it with -m"},
      {"--hf-token",
       {"-hft"},
       "downloading the model from Hugging Face",
       {},
       "download the GGUF file and give it with -m"},
  };
  return flags;
}

std::string spelled(const LlamaBenchOnlyFlag& flag) {
  return flag.aliases.empty() ? std::string(flag.name) : fmt::format("{} ({})", flag.aliases.front(), flag.name);
}

Status check_flag(const LlamaBenchOnlyFlag& flag, const std::vector<std::string>& given) {
  auto values = parse_word_list(given, std::string(flag.aliases.empty() ? flag.name : flag.aliases.front()));
  if (!values) return values.error();
  for (const std::string& value : *values) {
    if (std::find(flag.accepted.begin(), flag.accepted.end(), value) != flag.accepted.end()) continue;
    const std::string only =
        flag.accepted.empty() ? std::string("the flag is not taken")
                              : fmt::format("only llama-bench's default, {}, is taken", fmt::join(flag.accepted, ","));
    return fail("{} {}: infertune bench does not support {} ({}); {}", spelled(flag), value, flag.feature, flag.instead,
                only);
  }
  return {};
}

}  // namespace

void add_llama_bench_only_flags(CLI::App& app, LlamaBenchOnlyFlagText& text) {
  for (const LlamaBenchOnlyFlag& flag : llama_bench_only_flags()) {
    const std::string help =
        flag.accepted.empty()
            ? fmt::format("llama-bench's {}: not supported ({})", spelled(flag), flag.instead)
            : fmt::format("llama-bench's {}: {} only ({})", spelled(flag), fmt::join(flag.accepted, ","), flag.instead);
    app.add_option(std::string(flag.name), text.values[std::string(flag.name)], help)
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->group(kGroup);
  }
  app.add_flag("--offline", text.offline, "llama-bench's --offline: bench never downloads anything")->group(kGroup);
}

Status check_llama_bench_only_flags(const LlamaBenchOnlyFlagText& text) {
  for (const LlamaBenchOnlyFlag& flag : llama_bench_only_flags()) {
    auto given = text.values.find(std::string(flag.name));
    if (given == text.values.end() || given->second.empty()) continue;
    if (Status s = check_flag(flag, given->second); !s) return s;
  }
  return {};
}

std::vector<FlagAlias> llama_bench_only_flag_aliases() {
  std::vector<FlagAlias> aliases;
  for (const LlamaBenchOnlyFlag& flag : llama_bench_only_flags()) {
    for (std::string_view alias : flag.aliases) aliases.push_back({alias, flag.name});
  }
  return aliases;
}

}  // namespace infertune
