#include "sweeps/quality/variant_quality.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>
#include <vector>

#include "engine/model/model.h"
#include "engine/model/model_config.h"
#include "engine/quality/corpus.h"
#include "engine/quality/kl_divergence.h"
#include "engine/quality/logprob_file.h"
#include "engine/quality/perplexity.h"
#include "engine/settings/make_context.h"
#include "engine/tokenizer/tokenizer.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;

constexpr int kFiguresVersion = 1;  // of the cached JSON; another version is measured again

std::string method_tag(const QualityMethod& m) { return fmt::format("{}-c{}x{}", m.corpus, m.n_ctx, m.n_chunks); }

fs::path part_of(const fs::path& path) { return fmt::format("{}.part-{}", path.string(), getpid()); }

Status rename_into_place(const fs::path& part, const fs::path& path) {
  std::error_code ec;
  fs::rename(part, path, ec);
  if (!ec) return {};
  fs::remove(part, ec);
  return fail("renaming '{}' into '{}': {}", part.string(), path.string(), ec.message());
}

// A model loaded with a context of one chunk, and its tokenizer's BOS (as llama-perplexity starts each chunk).
struct Scorer {
  std::unique_ptr<Model> model;
  PlacedContext placed;
  std::optional<int32_t> bos;
  std::optional<Tokenizer> tokenizer;
};

Result<Scorer> load_scorer(const std::string& path, uint32_t n_ctx) {
  auto model = Model::load(path);
  if (!model) return fail("model '{}': {}", path, model.error().message);
  Scorer s;
  s.model = std::make_unique<Model>(std::move(*model));
  auto tokenizer = Tokenizer::from_gguf(s.model->file());
  if (!tokenizer) return fail("model '{}': its tokenizer: {}", path, tokenizer.error().message);
  if (tokenizer->vocab().add_bos()) s.bos = tokenizer->bos();
  s.tokenizer = std::move(*tokenizer);
  EngineSettings settings;
  settings.context.n_ctx = n_ctx;
  settings.context.n_batch = n_ctx;
  auto placed = make_context(*s.model, settings);
  if (!placed) return fail("model '{}': {}", path, placed.error().message);
  s.placed = std::move(*placed);
  return s;
}

PerplexityParams chunk_params(const Scorer& s, uint32_t n_ctx, uint32_t n_chunks) {
  PerplexityParams params;
  params.n_ctx = n_ctx;
  params.n_chunks = static_cast<int32_t>(n_chunks);
  params.n_batch = n_ctx;
  params.bos = s.bos;
  return params;
}

// The base's log-probabilities at the scored positions of the method's chunks, written to `path`.
Status write_base_logprobs(const std::string& base, const QualityMethod& method, const fs::path& path) {
  auto text = corpus_text(method.corpus, method.corpus_root);
  if (!text) return text.error();
  auto scorer = load_scorer(base, method.n_ctx);
  if (!scorer) return scorer.error();
  const std::vector<int32_t> tokens = scorer->tokenizer->encode(*text, /*add_special=*/true, /*parse_special=*/false);
  const size_t needed = size_t{method.n_ctx} * method.n_chunks;
  if (tokens.size() < needed) {
    return fail("corpus {}: {} tokens with the tokenizer of '{}', fewer than {} chunks of {}", method.corpus,
                tokens.size(), base, method.n_chunks, method.n_ctx);
  }
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return fail("quality cache '{}': {}", path.parent_path().string(), ec.message());
  const fs::path part = part_of(path);
  const LogprobHeader header{method.n_ctx, scorer->model->config().n_vocab, method.n_chunks};
  auto writer = LogprobWriter::create(part.string(), header, std::span<const int32_t>(tokens).first(needed));
  if (!writer) return writer.error();
  const auto on_logits = [&](size_t, std::span<const float> logits) { return writer->add_chunk(logits); };
  auto scores = score_chunks(*scorer->placed.context, std::span<const int32_t>(tokens).first(needed),
                             chunk_params(*scorer, method.n_ctx, method.n_chunks), {}, on_logits);
  if (!scores) {
    fs::remove(part.string() + ".tmp", ec);  // LogprobWriter's own temporary name
    fs::remove(part, ec);
    return fail("scoring the base '{}': {}", base, scores.error().message);
  }
  if (Status s = writer->finish(); !s) return s;
  return rename_into_place(part, path);
}

Result<QualityFigures> score_variant(const std::string& variant, const fs::path& logprobs,
                                     const QualityMethod& method) {
  auto base = LogprobReader::open(logprobs.string());
  if (!base) return base.error();
  const LogprobHeader header = base->header();
  auto scorer = load_scorer(variant, header.n_ctx);
  if (!scorer) return scorer.error();
  const uint32_t n_vocab = scorer->model->config().n_vocab;
  if (n_vocab != header.n_vocab) {
    return fail("variant '{}' has a vocabulary of {}, its base's log-probabilities ({}) {}", variant, n_vocab,
                logprobs.string(), header.n_vocab);
  }
  PerplexityParams params = chunk_params(*scorer, header.n_ctx, header.n_chunks);
  params.need_two_chunks = false;
  KldAccumulator kld;
  std::vector<f16_t> rows;
  const std::vector<int32_t>& tokens = base->tokens();
  const uint32_t n_ctx = header.n_ctx;
  const auto on_logits = [&](size_t c, std::span<const float> logits) -> Status {
    if (Status s = base->read_chunk(static_cast<uint32_t>(c), rows); !s) return s;
    for (size_t i = n_ctx / 2, row = 0; i + 1 < n_ctx; ++i, ++row) {
      kld.add(std::span<const f16_t>(rows).subspan(row * n_vocab, n_vocab), logits.subspan(i * n_vocab, n_vocab),
              tokens[c * n_ctx + i + 1]);
    }
    return {};
  };
  auto scores = score_chunks(*scorer->placed.context, tokens, params, {}, on_logits);
  if (!scores) return fail("scoring the variant '{}': {}", variant, scores.error().message);
  const PerplexityEstimate estimate = PerplexityEstimate::of(*scores);
  const KldSummary summary = kld.summary();
  QualityFigures f;
  f.corpus = method.corpus;
  f.n_ctx = header.n_ctx;
  f.n_chunks = header.n_chunks;
  f.positions = summary.positions;
  f.ppl = estimate.ppl;
  f.ppl_error = estimate.ppl_error;
  f.base_ppl = summary.ppl_base;
  f.kld_mean = summary.kld.mean;
  f.kld_error = summary.kld.mean_error;
  f.kld_p99 = summary.kld.p99;
  f.kld_max = summary.kld.max;
  f.same_top = summary.same_top;
  return f;
}

nlohmann::json figures_json(const QualityFigures& f) {
  return {{"version", kFiguresVersion}, {"corpus", f.corpus},       {"n_ctx", f.n_ctx},
          {"n_chunks", f.n_chunks},     {"positions", f.positions}, {"ppl", f.ppl},
          {"ppl_error", f.ppl_error},   {"base_ppl", f.base_ppl},   {"kld_mean", f.kld_mean},
          {"kld_error", f.kld_error},   {"kld_p99", f.kld_p99},     {"kld_max", f.kld_max},
          {"same_top", f.same_top}};
}

// The cached figures, or none when the file is absent, unreadable or of another version or method.
std::optional<QualityFigures> read_figures(const fs::path& path, const QualityMethod& method) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object() || j.value("version", 0) != kFiguresVersion) return std::nullopt;
  try {
    QualityFigures f;
    f.corpus = j.at("corpus").get<std::string>();
    f.n_ctx = j.at("n_ctx").get<uint32_t>();
    f.n_chunks = j.at("n_chunks").get<uint32_t>();
    if (f.corpus != method.corpus || f.n_ctx != method.n_ctx || f.n_chunks != method.n_chunks) return std::nullopt;
    f.positions = j.at("positions").get<uint64_t>();
    f.ppl = j.at("ppl").get<double>();
    f.ppl_error = j.at("ppl_error").get<double>();
    f.base_ppl = j.at("base_ppl").get<double>();
    f.kld_mean = j.at("kld_mean").get<double>();
    f.kld_error = j.at("kld_error").get<double>();
    f.kld_p99 = j.at("kld_p99").get<double>();
    f.kld_max = j.at("kld_max").get<double>();
    f.same_top = j.at("same_top").get<double>();
    return f;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // damaged: measured again
  }
}

Status write_figures(const fs::path& path, const QualityFigures& f) {
  const fs::path part = part_of(path);
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    if (!out) return fail("quality cache '{}': cannot create it", part.string());
    out << figures_json(f).dump(2) << "\n";
    out.close();
    if (!out) return fail("quality cache '{}': write failed", part.string());
  }
  return rename_into_place(part, path);
}

}  // namespace

Result<QualityMethod> quality_method_for(const std::string& base, QualityMethod method) {
  auto file = GgufFile::open(base);
  if (!file) return fail("base model '{}': {}", base, file.error().message);
  auto config = read_model_config(*file);
  if (!config) return fail("base model '{}': {}", base, config.error().message);
  if (config->n_ctx_train > 0) method.n_ctx = std::min(method.n_ctx, config->n_ctx_train);
  method.n_ctx -= method.n_ctx % 2;  // the scored half is the chunk's second half
  if (method.n_ctx < 8)
    return fail("base model '{}': a trained context of {} is too short to score", base, method.n_ctx);
  return method;
}

Result<QualityResult> measure_variant_quality(const std::string& base, const std::string& base_content_hash,
                                              const std::string& variant, const QualityMethod& method,
                                              const fs::path& cache_dir, const QualityLogFn& log) {
  QualityResult result;
  const fs::path figures_path =
      cache_dir / fmt::format("{}.quality-{}.json", fs::path(variant).filename().string(), method_tag(method));
  if (auto cached = read_figures(figures_path, method)) {
    result.figures = *cached;
    result.from_cache = true;
    result.base_from_cache = true;
    return result;
  }
  const fs::path logprobs = cache_dir / fmt::format("{}-{}.{}.logprobs", fs::path(base).stem().string(),
                                                    base_content_hash, method_tag(method));
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (ec) return fail("quality cache '{}': {}", cache_dir.string(), ec.message());
  result.base_from_cache = fs::exists(logprobs, ec);
  if (!result.base_from_cache) {
    if (log)
      log(fmt::format("scoring the base {} on {} ({} chunks of {} tokens), once", base, method.corpus, method.n_chunks,
                      method.n_ctx));
    if (Status s = write_base_logprobs(base, method, logprobs); !s) return s.error();
  }
  auto figures = score_variant(variant, logprobs, method);
  if (!figures) return figures.error();
  if (Status s = write_figures(figures_path, *figures); !s) return s.error();
  result.figures = *figures;
  return result;
}

}  // namespace infertune
