// `infertune imatrix`: collects the importance matrix (engine/quality/importance_matrix.h) by running a text through
// the model in llama-perplexity's chunks, as llama-imatrix does, and prints the perplexity on the way:
// -m MODEL -f TEXT|--corpus NAME [-o imatrix.gguf] [--output-format gguf|dat] [--chunks N] [-c 512].
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "engine/engine_commands.h"
#include "engine/model/model.h"
#include "engine/quality/corpus.h"
#include "engine/quality/importance_matrix.h"
#include "engine/quality/perplexity.h"
#include "engine/settings/make_context.h"
#include "engine/settings/setting_flags.h"
#include "engine/tokenizer/tokenizer.h"

namespace infertune {
namespace {

constexpr const char* kCommand = "imatrix";
constexpr uint32_t kDefaultChunk = 512;

struct ImatrixFlags {
  std::string model;
  std::string text_file;
  std::string corpus;
  std::string output = "imatrix.gguf";
  std::string format;  // gguf or dat; empty: from the output's suffix (.dat: dat, else gguf)
  int32_t n_chunks = -1;
  bool process_output = false;
  EngineSettings settings;
};

Result<bool> wants_dat(const ImatrixFlags& flags) {
  if (flags.format.empty()) return flags.output.ends_with(".dat");
  if (flags.format != "gguf" && flags.format != "dat") {
    return fail("--output-format '{}': must be gguf or dat", flags.format);
  }
  return flags.format == "dat";
}

int run_imatrix(const ImatrixFlags& flags) {
  if (flags.text_file.empty() == flags.corpus.empty())
    return report_error(kCommand, "give one of -f FILE and --corpus NAME");
  auto dat = wants_dat(flags);
  if (!dat) return report_error(kCommand, dat.error().message);
  if (flags.settings.n_gpu_layers != 0) {
    return report_error(kCommand, "the activations are read on the CPU: run without -ngl");
  }
  auto text = text_to_score(flags.text_file, flags.corpus);
  if (!text) return report_error(kCommand, text.error().message);
  auto model = Model::load(flags.model, {.use_mmap = flags.settings.use_mmap, .repack = flags.settings.repack});
  if (!model) return report_error(kCommand, model.error().message);
  auto tokenizer = Tokenizer::from_gguf(model->file());
  if (!tokenizer) return report_error(kCommand, "the model's tokenizer: " + tokenizer.error().message);
  EngineSettings settings = flags.settings;
  if (settings.context.n_ctx == 0) settings.context.n_ctx = kDefaultChunk;
  auto placed = make_context(*model, settings);
  if (!placed) return report_error(kCommand, placed.error().message);

  const std::vector<int32_t> tokens = tokenizer->encode(*text, /*add_special=*/true, /*parse_special=*/false);
  PerplexityParams params;
  params.n_ctx = settings.context.n_ctx;
  params.n_chunks = flags.n_chunks;
  params.n_batch = settings.context.n_batch == 0 ? params.n_ctx : settings.context.n_batch;
  params.need_two_chunks = false;
  if (tokenizer->vocab().add_bos()) params.bos = tokenizer->bos();

  ImportanceMatrix matrix(flags.process_output, model->config().n_expert);
  const auto start = std::chrono::steady_clock::now();
  fmt::print(stderr, "imatrix: {} tokens in chunks of {}\n", tokens.size(), params.n_ctx);
  Result<std::vector<ChunkScore>> scores = [&] {
    const ScopedActivationObserver watching(matrix);
    return score_chunks(*placed->context, tokens, params, [](std::span<const ChunkScore> chunks) {
      fmt::print("[{}]{:.4f},", chunks.size(), PerplexityEstimate::of(chunks).ppl);
      std::fflush(stdout);
    });
  }();
  if (!scores) return report_error(kCommand, scores.error().message);
  const PerplexityEstimate e = PerplexityEstimate::of(*scores);
  fmt::print("\nFinal estimate: PPL = {:.4f} +/- {:.5f}\n", e.ppl, e.ppl_error);
  std::fflush(stdout);  // before the summary on stderr

  ImportanceMatrix::Provenance provenance;
  provenance.datasets = {flags.corpus.empty() ? flags.text_file : "corpus:" + flags.corpus};
  provenance.chunk_count = static_cast<uint32_t>(scores->size());
  provenance.chunk_size = params.n_ctx;
  const Status written =
      *dat ? matrix.write_dat(flags.output, provenance) : matrix.write_gguf(flags.output, provenance);
  if (!written) return report_error(kCommand, written.error().message);
  fmt::print(stderr, "imatrix: {} weights over {} chunks written to {} ({}) in {:.1f} s\n", matrix.entries().size(),
             scores->size(), flags.output, *dat ? "dat" : "gguf",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

}  // namespace

void add_imatrix_command(Subcommands& commands) {
  auto flags = std::make_shared<ImatrixFlags>();
  CLI::App* app = commands.add(
      "imatrix", "Collect an importance matrix for quantization from a text, as llama-imatrix: -m MODEL -f TEXT",
      [flags] { return run_imatrix(*flags); });
  app->add_option("-m,--model", flags->model, "GGUF model file (F16/BF16/F32 for the best matrix)")->required();
  auto* file = app->add_option("-f,--file", flags->text_file, "Calibration text");
  app->add_option("--corpus", flags->corpus, "A text that comes with the machine instead of -f: python-tutorial")
      ->excludes(file);
  app->add_option("-o,--output", flags->output, "Output file (default imatrix.gguf)");
  app->add_option("--output-format", flags->format, "gguf or dat (llama.cpp's legacy format; default: by -o's suffix)");
  app->add_option("--chunks", flags->n_chunks, "At most this many chunks of -c tokens (default: all)")
      ->check(CLI::Range(1, 1 << 30));
  app->add_flag("--process-output", flags->process_output, "Also collect output.weight (llama-imatrix's flag)");
  app->footer("-c is the chunk size (default 512).");
  add_setting_flags(*app, Command::run, flags->settings);
  commands.add_aliases(kCommand, setting_flag_aliases(Command::run));
}

}  // namespace infertune
