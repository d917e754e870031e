// `infertune embedding`: llama-embedding. The text of -p or -f is split at --embd-separator into prompts, each
// tokenized as llama.cpp tokenizes embedding inputs (BOS/EOS as the vocabulary adds them, control-token texts
// parsed), embedded by the engine (embedder.h: prompts share batches, a sequence each), pooled per --pooling (the
// model's own by default), scaled per --embd-normalize and printed in one of llama-embedding's layouts
// (embedding_output.h) on stdout; a summary goes to stderr.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/batch/seq_set.h"
#include "engine/cli/flag_file.h"
#include "engine/cli/flag_ranges.h"
#include "engine/embedding/embedder.h"
#include "engine/embedding/embedding_output.h"
#include "engine/engine_commands.h"
#include "engine/model/model.h"
#include "engine/settings/make_context.h"
#include "engine/settings/setting_flags.h"
#include "engine/tokenizer/tokenizer.h"

namespace infertune {
namespace {

constexpr const char* kCommand = "embedding";

struct EmbeddingFlags {
  std::string model;
  std::optional<std::string> prompt;       // -p
  std::optional<std::string> prompt_file;  // -f
  std::string separator = "\n";            // --embd-separator
  std::optional<std::string> pooling;      // --pooling; absent: the model's own
  int normalize = kEuclideanNorm;          // --embd-normalize
  std::string output_format;               // --embd-output-format
  uint32_t n_parallel = 0;                 // -np; 0: a sequence per prompt, up to kMaxSequences
  EngineSettings settings;                 // the settings table's flags of run (-c, -b, -ub, -t, -ngl, ...)
};

// What the flags ask for, checked before the model is loaded.
struct EmbeddingRequest {
  std::vector<std::string> prompts;
  std::optional<Pooling> pooling;  // absent: the model's own
  EmbeddingFormat format = EmbeddingFormat::plain;
};

// -p's text, or -f's file without its final newline (as llama.cpp's tools read -f).
Result<std::string> prompt_text(const EmbeddingFlags& flags) {
  if (flags.prompt.has_value() == flags.prompt_file.has_value()) {
    return fail("give exactly one of -p TEXT and -f FILE: the prompts to embed, split at --embd-separator");
  }
  if (flags.prompt) return *flags.prompt;
  auto text = read_flag_file("-f", *flags.prompt_file);
  if (text && !text->empty() && text->back() == '\n') text->pop_back();
  return text;
}

// The pieces of `text` between separators; empty ones (a separator at an end, two in a row) are no prompts.
std::vector<std::string> split_prompts(std::string_view text, std::string_view separator) {
  std::vector<std::string> prompts;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find(separator, start), text.size());
    if (end > start) prompts.emplace_back(text.substr(start, end - start));
    start = end + separator.size();
  }
  return prompts;
}

Result<EmbeddingRequest> request_of(const EmbeddingFlags& flags) {
  EmbeddingRequest request;
  auto format = parse_embedding_format(flags.output_format);
  if (!format) return format.error();
  request.format = *format;
  if (flags.pooling) {
    auto pooling = parse_pooling(*flags.pooling);
    if (!pooling) return pooling.error();
    request.pooling = *pooling;
  }
  if (flags.separator.empty()) return fail("--embd-separator: the separator is empty");
  auto text = prompt_text(flags);
  if (!text) return text.error();
  request.prompts = split_prompts(*text, flags.separator);
  if (request.prompts.empty()) {
    if (text->empty()) return fail("the prompt is empty: nothing to embed");
    return fail("the prompt holds nothing but separators (--embd-separator): nothing to embed");
  }
  return request;
}

// The beginning of a prompt, for messages.
std::string excerpt(const std::string& prompt) {
  constexpr size_t kShown = 32;
  return prompt.size() <= kShown ? prompt : prompt.substr(0, kShown) + "...";
}

Result<std::vector<std::vector<int32_t>>> tokenize_prompts(const Tokenizer& tokenizer,
                                                           const std::vector<std::string>& prompts,
                                                           uint32_t max_tokens) {
  std::vector<std::vector<int32_t>> inputs;
  for (size_t i = 0; i < prompts.size(); ++i) {
    std::vector<int32_t> tokens = tokenizer.encode(prompts[i], /*add_special=*/true, /*parse_special=*/true);
    if (tokens.empty()) return fail("prompt {} ('{}') encodes to no tokens", i, excerpt(prompts[i]));
    if (tokens.size() > max_tokens) {
      return fail(
          "prompt {} ('{}') has {} tokens, more than the {} an input may have (raise -c; -ub for a "
          "bidirectional model)",
          i, excerpt(prompts[i]), tokens.size(), max_tokens);
    }
    inputs.push_back(std::move(tokens));
  }
  return inputs;
}

// "1 prompt", "3 prompts"
std::string count_of(size_t n, std::string_view noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

// Models trained for embeddings end their inputs with SEP or EOS (their vocabulary adds it), and pool what that token
// saw; llama-embedding warns when an input ends otherwise, as here.
void warn_of_unterminated_inputs(const Tokenizer& tokenizer, const std::vector<std::vector<int32_t>>& inputs) {
  const SpecialTokenIds& special = tokenizer.vocab().special();
  const size_t unterminated = std::count_if(inputs.begin(), inputs.end(), [&](const std::vector<int32_t>& tokens) {
    return tokens.back() != special.sep && tokens.back() != special.eos;
  });
  if (unterminated == 0) return;
  const size_t n = inputs.size();
  const std::string which = n == 1              ? std::string("the prompt ends")
                            : unterminated == n ? fmt::format("all {} prompts end", n)
                            : unterminated == 1 ? fmt::format("1 of the {} prompts ends", n)
                                                : fmt::format("{} of the {} prompts end", unterminated, n);
  fmt::print(stderr,
             "{}: warning: {} with neither SEP nor EOS, which models trained for embeddings expect (the "
             "vocabulary adds EOS where the GGUF sets tokenizer.ggml.add_eos_token)\n",
             kCommand, which);
}

Status check_finite(const std::vector<Embedding>& embeddings) {
  for (size_t i = 0; i < embeddings.size(); ++i) {
    const std::vector<float>& values = embeddings[i].values;
    if (std::any_of(values.begin(), values.end(), [](float v) { return !std::isfinite(v); })) {
      return fail("the embedding of prompt {} holds a value that is not finite (NaN or infinity)", i);
    }
  }
  return {};
}

EmbeddingListing listing_of(const std::vector<std::string>& prompts, const std::vector<Embedding>& embeddings,
                            Pooling pooling, int normalize) {
  EmbeddingListing listing{
      .prompts = prompts, .rows = {}, .per_token = pooling == Pooling::none, .int16_scaled = normalize == 0};
  for (const Embedding& e : embeddings) {
    for (size_t r = 0; r < e.n_rows(); ++r) listing.rows.push_back(e.row(r));
  }
  return listing;
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings) fmt::print(stderr, "{}: warning: {}\n", kCommand, warning);
}

int run_embedding(const EmbeddingFlags& flags) {
  auto request = request_of(flags);
  if (!request) return report_error(kCommand, request.error().message);
  auto model = Model::load(flags.model, {.use_mmap = flags.settings.use_mmap, .repack = flags.settings.repack});
  if (!model) return report_error(kCommand, model.error().message);
  print_warnings(model->warnings());
  auto tokenizer = Tokenizer::from_gguf(model->file());
  if (!tokenizer) return report_error(kCommand, "the model's tokenizer: " + tokenizer.error().message);
  auto pooling = request->pooling ? Result<Pooling>(*request->pooling) : model_pooling(model->config());
  if (!pooling) return report_error(kCommand, pooling.error().message);

  const size_t n_prompts = request->prompts.size();
  EngineSettings settings = flags.settings;
  settings.context.embeddings = true;
  settings.context.n_seq_max =
      flags.n_parallel != 0 ? flags.n_parallel : static_cast<uint32_t>(std::min<size_t>(n_prompts, kMaxSequences));
  auto placed = make_context(*model, settings);
  if (!placed) return report_error(kCommand, placed.error().message);
  print_warnings(placed->warnings);
  Context& ctx = *placed->context;

  auto inputs = tokenize_prompts(*tokenizer, request->prompts, Embedder::max_input_tokens(ctx));
  if (!inputs) return report_error(kCommand, inputs.error().message);
  warn_of_unterminated_inputs(*tokenizer, *inputs);
  size_t n_tokens = 0;
  for (const std::vector<int32_t>& tokens : *inputs) n_tokens += tokens.size();

  const auto start = std::chrono::steady_clock::now();
  Embedder embedder(ctx, {.pooling = *pooling, .normalize = flags.normalize});
  auto embeddings = embedder.embed(*inputs);
  if (!embeddings) return report_error(kCommand, embeddings.error().message);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (Status s = check_finite(*embeddings); !s) return report_error(kCommand, s.error().message);

  const EmbeddingListing listing = listing_of(request->prompts, *embeddings, *pooling, flags.normalize);
  fmt::print("{}", format_embeddings(listing, request->format));
  std::fflush(stdout);  // the embeddings first, then the summary, when both go to one terminal
  fmt::print(stderr, "{}: {}, {}, pooling {}, --embd-normalize {}: {} of {} values", kCommand,
             count_of(n_prompts, "prompt"), count_of(n_tokens, "token"), pooling_name(*pooling), flags.normalize,
             count_of(listing.rows.size(), "embedding"), model->config().n_embd);
  fmt::print(stderr, " in {:.1f} ms", ms);
  fmt::print(stderr, " ({:.1f} tokens/s)\n", ms > 0 ? n_tokens * 1000.0 / ms : 0.0);
  return 0;
}

}  // namespace

void add_embedding_command(Subcommands& commands) {
  auto flags = std::make_shared<EmbeddingFlags>();
  CLI::App* app = commands.add("embedding", "Embeddings of texts, as llama-embedding computes and prints them",
                               [flags] { return run_embedding(*flags); });
  app->add_option("-m,--model", flags->model, "GGUF model file")->required();
  auto* prompt = app->add_option("-p,--prompt", flags->prompt, "The prompts: text split at --embd-separator");
  app->add_option("-f,--file", flags->prompt_file, "Read the prompts from this file (its final newline dropped)")
      ->excludes(prompt);
  app->add_option("--embd-separator", flags->separator,
                  "What separates the prompts (default: a newline); empty pieces are skipped");
  app->add_option("--pooling", flags->pooling,
                  "none (a vector per token), mean, cls (the first token's) or last; default: the model's own "
                  "({arch}.pooling_type; none when the file does not say)");
  app->add_option("--embd-normalize", flags->normalize, "Scaling of each vector (default 2: to unit length)")
      ->transform(int_flag_range(
          {.low = -1, .note = "-1 none, 0 max absolute to int16's range, 1 taxicab, 2 euclidean, >2 p-norm"}));
  app->add_option("--embd-output-format", flags->output_format,
                  "'' (default: the values shown, and a similarity matrix of several prompts), array, json "
                  "(OpenAI's list), json+ (json with cosineSimilarity) or raw (a line per vector)");
  app->add_option("--parallel", flags->n_parallel,
                  "-np: sequences embedded together in one batch (default: one per prompt, up to 256)")
      ->transform(int_flag_range({.low = 1, .high = kMaxSequences}));
  app->footer(
      "-c is the context size (default 4096): no prompt may have more tokens. Prompts share a batch of -b tokens, "
      "one per sequence, and a longer one is split over several.");
  add_setting_flags(*app, Command::run, flags->settings);
  std::vector<FlagAlias> aliases = setting_flag_aliases(Command::run);
  aliases.push_back({"-np", "--parallel"});
  commands.add_aliases(kCommand, aliases);
}

}  // namespace infertune
