// `infertune run`: load a model, evaluate a prompt (token ids or text) as one batch, optionally write its
// logits, then generate up to -n tokens one step at a time through the KV cache, streaming the text (or
// printing the ids), with a timing summary on stderr. Every numeric flag is range-checked while the command
// line is parsed (engine/cli/flag_ranges.h), so a bad value is refused before the model is loaded.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/cli/flag_ranges.h"
#include "engine/context/context.h"
#include "engine/engine_commands.h"
#include "engine/grammar/grammar_flags.h"
#include "engine/grammar/token_grammar.h"
#include "engine/model/model.h"
#include "engine/run/logits_file.h"
#include "engine/run/rope_flags.h"
#include "engine/run/token_list.h"
#include "engine/sampling/constrained_sampling.h"
#include "engine/sampling/sampler_chain.h"
#include "engine/sampling/sampling_flags.h"
#include "engine/settings/make_context.h"
#include "engine/settings/setting_flags.h"
#include "engine/tokenizer/tokenizer.h"

namespace infertune {
namespace {

constexpr const char* kCommand = "run";

struct RunFlags {
  std::string model;
  std::optional<std::string> prompt;         // -p
  std::optional<std::string> prompt_tokens;  // --prompt-tokens
  int32_t n_predict = 128;                   // -n; -1: until end of generation or a full context
  EngineSettings settings;                   // the settings table's flags (engine/settings/settings_table.h)
  SamplingParams sampling;
  GrammarFlags grammar;  // --grammar, -j, ...
  RopeFlags rope;        // --rope-*, --yarn-*
  std::string logits_out;
  bool print_ids = false;
  bool mlock = false;
  bool ignore_eos = false;  // --ignore-eos: end tokens are never sampled (a fixed-length generation)
};

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

double per_second(size_t count, double ms) { return ms > 0 ? count * 1000.0 / ms : 0.0; }

struct Timings {
  double load_ms = 0;
  size_t prompt_tokens = 0;
  double prompt_ms = 0;
  size_t generated = 0;     // tokens sampled and emitted
  size_t decode_steps = 0;  // single-token decodes (generated, less the last one when it ended the run)
  double decode_ms = 0;
};

void print_timings(const Timings& t) {
  std::fflush(stdout);  // the generated text first, then the summary, when both go to one terminal
  fmt::print(stderr, "run: load {:.1f} ms | prompt {} tokens in {:.1f} ms, {:.2f} t/s | generated {} tokens, ",
             t.load_ms, t.prompt_tokens, t.prompt_ms, per_second(t.prompt_tokens, t.prompt_ms), t.generated);
  fmt::print(stderr, "{} decode steps in {:.1f} ms, {:.2f} t/s\n", t.decode_steps, t.decode_ms,
             per_second(t.decode_steps, t.decode_ms));
}

// The prompt as ids: parsed from --prompt-tokens, or -p encoded with BOS and special-token parsing, as
// llama.cpp's tools do.
Result<std::vector<int32_t>> prompt_ids(const RunFlags& flags, const std::optional<Tokenizer>& tokenizer) {
  if (flags.prompt_tokens) return parse_token_list(*flags.prompt_tokens);
  std::vector<int32_t> ids = tokenizer->encode(*flags.prompt, true, true);
  if (ids.empty()) return fail("-p: the prompt encodes to no tokens");
  return ids;
}

// The tokens that end generation: the tokenizer's end-of-generation set, or the file's eos without a tokenizer.
std::vector<int32_t> end_tokens(const std::optional<Tokenizer>& tokenizer, const ModelConfig& config) {
  if (tokenizer) return tokenizer->vocab().end_of_generation_ids();
  if (config.tokens.eos) return {static_cast<int32_t>(*config.tokens.eos)};
  return {};
}

// Samples, emits and decodes one token per step until -n, end of generation or a full context.
Result<std::vector<int32_t>> generate(const RunFlags& flags, Context& ctx, const std::optional<Tokenizer>& tokenizer,
                                      SamplerChain& sampler, TokenGrammar* grammar, std::vector<float> logits,
                                      Timings& timings) {
  std::vector<int32_t> generated;
  const bool stream_text = tokenizer && !flags.print_ids;
  ConstrainedSampling picker(end_tokens(tokenizer, ctx.model().config()));
  while (flags.n_predict < 0 || generated.size() < static_cast<size_t>(flags.n_predict)) {
    auto token = picker.pick(sampler, logits, {.grammar = grammar, .ban_end_tokens = flags.ignore_eos});
    if (!token) return token.error();
    if (picker.is_end_token(*token)) break;
    generated.push_back(*token);
    if (stream_text) {
      fmt::print("{}", tokenizer->token_to_piece(*token));
      std::fflush(stdout);
    }
    if (flags.n_predict >= 0 && generated.size() == static_cast<size_t>(flags.n_predict)) break;
    if (ctx.n_past() >= ctx.n_ctx()) {
      fmt::print(stderr, "\nrun: the context ({} positions, -c) is full; stopping\n", ctx.n_ctx());
      break;
    }
    const Stopwatch step;
    auto next = ctx.decode(std::span<const int32_t>(&generated.back(), 1));
    if (!next) return next.error();
    timings.decode_ms += step.ms();
    ++timings.decode_steps;
    logits.assign(next->begin(), next->end());
  }
  timings.generated = generated.size();
  if (stream_text && !generated.empty()) fmt::print("\n");
  return generated;
}

Result<Model> load_model(const RunFlags& flags, Timings& timings) {
  const Stopwatch load;
  auto model = Model::load(
      flags.model, {.use_mmap = flags.settings.use_mmap, .mlock = flags.mlock, .repack = flags.settings.repack});
  timings.load_ms = load.ms();
  if (model) {
    for (const std::string& warning : model->warnings()) fmt::print(stderr, "run: warning: {}\n", warning);
  }
  return model;
}

int run(const RunFlags& flags) {
  if (flags.prompt.has_value() == flags.prompt_tokens.has_value()) {
    return report_error(kCommand, "give exactly one of -p (text) and --prompt-tokens (ids)");
  }
  auto sampler = SamplerChain::create(flags.sampling);
  if (!sampler) return report_error(kCommand, sampler.error().message);
  auto grammar = grammar_from_flags(flags.grammar);
  if (!grammar) return report_error(kCommand, grammar.error().message);
  auto rope = rope_overrides(flags.rope);
  if (!rope) return report_error(kCommand, rope.error().message);
  Timings timings;
  auto model = load_model(flags, timings);
  if (!model) return report_error(kCommand, model.error().message);

  std::optional<Tokenizer> tokenizer;
  if (auto loaded = Tokenizer::from_gguf(model->file())) {
    tokenizer = std::move(*loaded);
  } else if (flags.prompt) {
    return report_error(kCommand, "-p needs the model's tokenizer: " + loaded.error().message);
  }
  if (*grammar && !tokenizer) return report_error(kCommand, "a grammar needs the model's tokenizer (its tokens' text)");
  std::optional<TokenGrammar> constraint;
  if (*grammar) {
    constraint.emplace(*grammar,
                       std::make_shared<const GrammarVocabulary>(GrammarVocabulary::from_tokenizer(*tokenizer)));
  }
  auto prompt = prompt_ids(flags, tokenizer);
  if (!prompt) return report_error(kCommand, prompt.error().message);

  EngineSettings settings = flags.settings;
  settings.context.rope = *rope;
  auto placed = make_context(*model, settings);
  if (!placed) return report_error(kCommand, placed.error().message);
  for (const std::string& warning : placed->warnings) fmt::print(stderr, "run: warning: {}\n", warning);
  Context* ctx = placed->context.get();
  if (prompt->size() > ctx->n_ctx()) {
    return report_error(kCommand, fmt::format("the prompt has {} tokens, more than the context size {} (raise -c)",
                                              prompt->size(), ctx->n_ctx()));
  }

  const Stopwatch prompt_time;
  auto logits = ctx->decode(*prompt, flags.logits_out.empty() ? Logits::Last : Logits::All);
  if (!logits) return report_error(kCommand, logits.error().message);
  timings.prompt_ms = prompt_time.ms();
  timings.prompt_tokens = prompt->size();
  if (!flags.logits_out.empty()) {
    if (Status s = write_logits_file(flags.logits_out, *logits); !s) return report_error(kCommand, s.error().message);
  }

  for (int32_t token : *prompt) sampler->accept(token);
  const size_t n_vocab = ctx->n_vocab();
  std::vector<float> last(logits->end() - static_cast<std::ptrdiff_t>(n_vocab), logits->end());
  auto generated =
      generate(flags, *ctx, tokenizer, *sampler, constraint ? &*constraint : nullptr, std::move(last), timings);
  if (!generated) return report_error(kCommand, generated.error().message);
  if (flags.print_ids) fmt::print("{}\n", fmt::join(*generated, ","));
  print_timings(timings);
  return 0;
}

}  // namespace

void add_run_command(Subcommands& commands) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* app =
      commands.add("run", "Evaluate a prompt and generate text with a GGUF model (CPU, and the GPU with -ngl)",
                   [flags] { return run(*flags); });
  app->add_option("-m,--model", flags->model, "GGUF model file")->required();
  auto* prompt = app->add_option("-p,--prompt", flags->prompt, "Prompt text (tokenized with BOS)");
  auto* tokens = app->add_option("--prompt-tokens", flags->prompt_tokens,
                                 "Prompt as comma-separated token ids, evaluated as one batch");
  prompt->excludes(tokens);
  app->add_option("-n,--n-predict", flags->n_predict,
                  "Tokens to generate (default 128; 0 = evaluate the prompt only; -1 = until end of generation)")
      ->transform(int_flag_range({.low = 0, .special = {{-1, "until end of generation"}}}));
  app->add_option("--logits-out", flags->logits_out,
                  "Write the prompt's logits as float32 [n_tokens][n_vocab], little-endian, to this file");
  app->add_flag("--print-ids", flags->print_ids, "Print the generated token ids, comma-separated, instead of text");
  app->add_flag("--mlock", flags->mlock, "Lock the model's memory in RAM");
  app->add_flag("--ignore-eos", flags->ignore_eos,
                "Never sample an end-of-generation token: generate -n tokens (as llama-cli's --ignore-eos)");
  add_sampling_flags(*app, flags->sampling);
  add_grammar_flags(*app, flags->grammar);
  add_rope_flags(*app, flags->rope);
  add_setting_flags(*app, Command::run, flags->settings);
  std::vector<FlagAlias> aliases = setting_flag_aliases(Command::run);
  for (const FlagAlias& alias : grammar_flag_aliases()) aliases.push_back(alias);
  commands.add_aliases(kCommand, aliases);
}

}  // namespace infertune
