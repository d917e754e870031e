#include "bench/batched_bench/batched_params.h"

#include <array>

#include "engine/settings/value_lists.h"
#include "engine/cli/flag_ranges.h"
#include "engine/settings/setting_flags.h"

namespace infertune {
namespace {

constexpr std::array kListAliases{FlagAlias{"-npp", "--n-pp"}, FlagAlias{"-ntg", "--n-tg"},
                                  FlagAlias{"-npl", "--n-pl"}};

constexpr const char* kListGroup = "Test parameters (comma lists and ranges first-last+step / first-last*mult)";
constexpr int kMaxTokens = 1 << 24;

void add_list(CLI::App& app, const std::string& names, std::vector<std::string>& into, const std::string& help) {
  app.add_option(names, into, help)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(kListGroup);
}

// A list flag that was not given keeps its default; one that was must have every value in `allowed`.
Status assign_ints(const std::vector<std::string>& text, const char* flag, const IntRange& allowed,
                   std::vector<int>& into) {
  if (text.empty()) return {};
  auto values = parse_int_list(text, flag, allowed);
  if (!values) return values.error();
  into = std::move(*values);
  return {};
}

Result<BatchedOutput> parse_output(const std::string& text) {
  for (BatchedOutput f : {BatchedOutput::markdown, BatchedOutput::json, BatchedOutput::jsonl, BatchedOutput::csv}) {
    if (text == batched_output_name(f)) return f;
  }
  return fail("-o: unknown format '{}' (md, json, jsonl, csv)", text);
}

}  // namespace

void add_batched_flags(CLI::App& app, BatchedFlagText& t, BatchedParams& p) {
  app.add_option("-m,--model", p.model, "GGUF model file")->required();
  add_list(app, "--n-pp", t.n_pp, "-npp: prompt tokens per sequence (default 128,256,512)");
  add_list(app, "--n-tg", t.n_tg, "-ntg: tokens generated per sequence (default 128,256)");
  add_list(app, "--n-pl", t.n_pl, "-npl: sequences decoded in parallel (default 1,2,4,8,16,32)");
  app.add_flag("--pps", p.shared_prompt, "The prompt is shared by all sequences: evaluated once, then copied");
  add_setting_flags(app, Command::batched_bench, p.settings);
  app.add_flag("--no-warmup", t.no_warmup, "Skip the untimed warmup decode");
  app.add_option("-o,--output", t.output, "Output format: md, json, jsonl, csv (default md)");
}

Status resolve_batched_params(const BatchedFlagText& t, BatchedParams& p) {
  if (Status s = assign_ints(t.n_pp, "-npp", {.low = 1, .high = kMaxTokens}, p.n_pp); !s) return s;
  if (Status s = assign_ints(t.n_tg, "-ntg", {.low = 0, .high = kMaxTokens}, p.n_tg); !s) return s;
  if (Status s = assign_ints(t.n_pl, "-npl", {.low = 1, .high = kMaxSequences}, p.n_pl); !s) return s;
  auto output = parse_output(t.output);
  if (!output) return output.error();
  p.output = *output;
  p.warmup = !t.no_warmup;
  return {};
}

const char* batched_output_name(BatchedOutput output) {
  switch (output) {
    case BatchedOutput::markdown:
      return "md";
    case BatchedOutput::json:
      return "json";
    case BatchedOutput::jsonl:
      return "jsonl";
    case BatchedOutput::csv:
      break;
  }
  return "csv";
}

std::vector<FlagAlias> batched_flag_aliases() {
  std::vector<FlagAlias> aliases = setting_flag_aliases(Command::batched_bench);
  aliases.insert(aliases.end(), kListAliases.begin(), kListAliases.end());
  return aliases;
}

}  // namespace infertune
