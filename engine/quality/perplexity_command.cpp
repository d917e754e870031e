// `infertune perplexity`: llama-perplexity's method and output (engine/quality/perplexity.h) on a text file:
// -f FILE -c N [--chunks N] [-b N], the running estimate after each chunk and the final PPL = x +/- y.
// --kl-divergence-base FILE also writes the model's log-probabilities (logprob_file.h); with --kl-divergence it reads
// them instead and compares the model with that base on the same tokens (kl_divergence.h).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "engine/engine_commands.h"
#include "engine/model/model.h"
#include "engine/quality/corpus.h"
#include "engine/quality/kl_divergence.h"
#include "engine/quality/logprob_file.h"
#include "engine/quality/perplexity.h"
#include "engine/settings/make_context.h"
#include "engine/settings/setting_flags.h"
#include "engine/tokenizer/tokenizer.h"

namespace infertune {
namespace {

constexpr const char* kCommand = "perplexity";
constexpr uint32_t kDefaultChunk = 512;  // llama-perplexity's usual -c

struct PerplexityFlags {
  std::string model;
  std::string text_file;
  std::string corpus;  // --corpus: a text that comes with the machine (corpus.h)
  int32_t n_chunks = -1;
  std::string kld_base;  // --kl-divergence-base
  bool kld = false;      // --kl-divergence
  EngineSettings settings;
};

// The tokens to score and the chunking: the text's (with the vocabulary's BOS), or a base file's.
struct Workload {
  std::vector<int32_t> tokens;
  PerplexityParams params;
  std::optional<LogprobReader> base;  // --kl-divergence
};

Result<Workload> workload_of(const PerplexityFlags& flags, const Tokenizer& tokenizer, uint32_t n_ctx_flag,
                             uint32_t n_batch) {
  Workload w;
  w.params.n_chunks = flags.n_chunks;
  if (tokenizer.vocab().add_bos()) w.params.bos = tokenizer.bos();
  if (flags.kld) {
    auto base = LogprobReader::open(flags.kld_base);
    if (!base) return base.error();
    if (n_ctx_flag != 0 && n_ctx_flag != base->header().n_ctx) {
      return fail("-c {}: the base file {} was written with -c {}", n_ctx_flag, flags.kld_base, base->header().n_ctx);
    }
    w.tokens = base->tokens();
    w.params.n_ctx = base->header().n_ctx;
    w.params.need_two_chunks = false;
    w.base = std::move(*base);
  } else {
    auto text = text_to_score(flags.text_file, flags.corpus);
    if (!text) return text.error();
    w.tokens = tokenizer.encode(*text, /*add_special=*/true, /*parse_special=*/false);
    w.params.n_ctx = n_ctx_flag == 0 ? kDefaultChunk : n_ctx_flag;
  }
  w.params.n_batch = n_batch == 0 ? w.params.n_ctx : n_batch;
  return w;
}

size_t chunk_count(const Workload& w) {
  const size_t available = w.tokens.size() / w.params.n_ctx;
  return w.params.n_chunks >= 0 ? std::min<size_t>(available, w.params.n_chunks) : available;
}

void print_distribution(const char* name, const Distribution& d, double scale, const char* unit) {
  fmt::print("Mean    {}: {:10.6f} ± {:.6f}{}\n", name, d.mean * scale, d.mean_error * scale, unit);
  const std::pair<const char*, double> rows[] = {{"Maximum", d.max},  {"99.9%  ", d.p999}, {"99.0%  ", d.p99},
                                                 {"95.0%  ", d.p95},  {"90.0%  ", d.p90},  {"Median ", d.median},
                                                 {"10.0%  ", d.p10},  {" 5.0%  ", d.p05},  {" 1.0%  ", d.p01},
                                                 {" 0.1%  ", d.p001}, {"Minimum", d.min}};
  for (const auto& [label, value] : rows) fmt::print("{} {}: {:10.6f}{}\n", label, name, value * scale, unit);
}

void print_kld_report(const KldSummary& s) {
  fmt::print("\n====== Perplexity statistics ({} positions) ======\n", s.positions);
  fmt::print("Mean PPL(Q)                   : {:10.6f}\n", s.ppl_model);
  fmt::print("Mean PPL(base)                : {:10.6f}\n", s.ppl_base);
  fmt::print("Mean ln(PPL(Q)/PPL(base))     : {:10.6f} ± {:.6f}\n", s.ln_ppl_ratio, s.ln_ppl_ratio_error);
  fmt::print("Mean PPL(Q)/PPL(base)         : {:10.6f}\n", std::exp(s.ln_ppl_ratio));
  fmt::print("\n====== KL divergence statistics ======\n");
  print_distribution("KLD", s.kld, 1, "");
  fmt::print("\n====== Token probability statistics ======\n");
  print_distribution("Δp ", s.delta_p, 100, " %");
  fmt::print("RMS Δp    : {:.3f} %\n", s.delta_p.rms * 100);
  fmt::print("Same top p: {:.3f} ± {:.3f} %\n", s.same_top * 100, s.same_top_error * 100);
}

Status check_flags(const PerplexityFlags& flags) {
  if (flags.kld && flags.kld_base.empty()) {
    return fail("--kl-divergence needs --kl-divergence-base FILE (the base model's log-probabilities)");
  }
  if (!flags.kld && flags.text_file.empty() == flags.corpus.empty()) {
    return fail("give one of -f FILE and --corpus NAME (--kl-divergence reads the base file's tokens instead)");
  }
  return {};
}

int run_perplexity(const PerplexityFlags& flags) {
  if (Status s = check_flags(flags); !s) return report_error(kCommand, s.error().message);
  auto model = Model::load(flags.model, {.use_mmap = flags.settings.use_mmap, .repack = flags.settings.repack});
  if (!model) return report_error(kCommand, model.error().message);
  auto tokenizer = Tokenizer::from_gguf(model->file());
  if (!tokenizer) return report_error(kCommand, "the model's tokenizer: " + tokenizer.error().message);
  auto work = workload_of(flags, *tokenizer, flags.settings.context.n_ctx, flags.settings.context.n_batch);
  if (!work) return report_error(kCommand, work.error().message);
  const uint32_t n_vocab = model->config().n_vocab;
  if (work->base && work->base->header().n_vocab != n_vocab) {
    return report_error(kCommand, fmt::format("the base file has a vocabulary of {}, the model {}",
                                              work->base->header().n_vocab, n_vocab));
  }
  EngineSettings settings = flags.settings;
  settings.context.n_ctx = work->params.n_ctx;
  auto placed = make_context(*model, settings);
  if (!placed) return report_error(kCommand, placed.error().message);

  const size_t n_chunks = chunk_count(*work);
  const uint32_t n_ctx = work->params.n_ctx;
  std::optional<LogprobWriter> writer;
  if (!flags.kld_base.empty() && !flags.kld) {
    auto created = LogprobWriter::create(
        flags.kld_base, {n_ctx, n_vocab, static_cast<uint32_t>(n_chunks)},
        std::span<const int32_t>(work->tokens).first(std::min(work->tokens.size(), n_chunks * n_ctx)));
    if (!created) return report_error(kCommand, created.error().message);
    writer = std::move(*created);
  }
  KldAccumulator kld;
  std::vector<f16_t> base_rows;
  const auto on_logits = [&](size_t c, std::span<const float> logits) -> Status {
    if (writer) return writer->add_chunk(logits);
    if (!work->base) return {};
    if (Status s = work->base->read_chunk(static_cast<uint32_t>(c), base_rows); !s) return s;
    for (size_t i = n_ctx / 2, row = 0; i + 1 < n_ctx; ++i, ++row) {
      kld.add(std::span<const f16_t>(base_rows).subspan(row * n_vocab, n_vocab), logits.subspan(i * n_vocab, n_vocab),
              work->tokens[c * n_ctx + i + 1]);
    }
    return {};
  };

  const auto start = std::chrono::steady_clock::now();
  fmt::print(stderr, "perplexity: {} tokens; {} chunks of {} (the second half of each scored), batch {}\n",
             work->tokens.size(), n_chunks, n_ctx, std::min(work->params.n_batch, n_ctx));
  const auto on_chunk = [](std::span<const ChunkScore> chunks) {
    fmt::print("[{}]{:.4f},", chunks.size(), PerplexityEstimate::of(chunks).ppl);
    std::fflush(stdout);
  };
  auto scores = score_chunks(*placed->context, work->tokens, work->params, on_chunk, on_logits);
  if (!scores) return report_error(kCommand, scores.error().message);
  const PerplexityEstimate e = PerplexityEstimate::of(*scores);
  fmt::print("\nFinal estimate: PPL = {:.4f} +/- {:.5f}\n", e.ppl, e.ppl_error);
  std::fflush(stdout);  // before the summary on stderr
  if (writer) {
    if (Status s = writer->finish(); !s) return report_error(kCommand, s.error().message);
    fmt::print(stderr, "perplexity: wrote the log-probabilities of {} chunks to {}\n", n_chunks, flags.kld_base);
  }
  if (work->base) print_kld_report(kld.summary());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(stderr, "perplexity: {} tokens scored in {:.2f} s ({:.1f} tokens/s evaluated)\n", e.count, seconds,
             seconds > 0 ? static_cast<double>(scores->size() * n_ctx) / seconds : 0.0);
  return 0;
}

}  // namespace

void add_perplexity_command(Subcommands& commands) {
  auto flags = std::make_shared<PerplexityFlags>();
  CLI::App* app =
      commands.add("perplexity", "Perplexity of a model on a text file, as llama-perplexity computes it: -f FILE -c N",
                   [flags] { return run_perplexity(*flags); });
  app->add_option("-m,--model", flags->model, "GGUF model file")->required();
  auto* file = app->add_option("-f,--file", flags->text_file, "Text file to score");
  app->add_option("--corpus", flags->corpus,
                  "A text that comes with the machine instead of -f: python-tutorial (Debian's python3-doc)")
      ->excludes(file);
  app->add_option("--chunks", flags->n_chunks, "Score at most this many chunks of -c tokens (default: all)")
      ->check(CLI::Range(1, 1 << 30));
  app->add_option("--kl-divergence-base", flags->kld_base,
                  "Write the model's log-probabilities to FILE (a base for --kl-divergence); with --kl-divergence, "
                  "read them from it");
  app->add_flag("--kl-divergence", flags->kld,
                "Compare the model with the base file's log-probabilities on its tokens: KL divergence, same top "
                "token, change in the next token's probability");
  app->footer("-c is the chunk size (default 512), -b the tokens per evaluation (at most -c).");
  add_setting_flags(*app, Command::run, flags->settings);
  commands.add_aliases(kCommand, setting_flag_aliases(Command::run));
}

}  // namespace infertune
