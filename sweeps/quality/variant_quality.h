#pragma once
// The quality of a quantization variant against its base model, as a sweep measures it once per variant:
// perplexity (engine/quality/perplexity.h) and KL divergence (kl_divergence.h) on a fixed text that comes
// with the machine (the built-in corpus), over a small fixed number of chunks so that it stays cheap next to
// the trials. The base's log-probabilities are computed once and cached beside the variants
// (<base stem>-<content hash>.<corpus>-c<N>x<K>.logprobs, logprob_file.h's layout); each variant's figures
// are cached there too (<variant file name>.quality-<corpus>-c<N>x<K>.json). Both are written under a temporary name and
// renamed into place, as the variants are, so a crash never leaves a partial file that a later sweep trusts.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "kernels/result.h"

namespace infertune {

struct QualityMethod {
  std::string corpus = "python-tutorial";  // engine/quality/corpus.h
  uint32_t n_ctx = 512;                    // tokens per chunk, at most the base's trained context
  uint32_t n_chunks = 4;                   // chunks scored (each scores its second half: about 1,000 positions)
  std::string corpus_root;                 // corpus_text's root (tests); empty: "/"
};

// What one variant measured against its base.
struct QualityFigures {
  std::string corpus;
  uint32_t n_ctx = 0, n_chunks = 0;
  uint64_t positions = 0;  // tokens scored
  double ppl = 0, ppl_error = 0;
  double base_ppl = 0;
  double kld_mean = 0, kld_error = 0, kld_p99 = 0, kld_max = 0;
  double same_top = 0;  // share of positions whose most likely token is the base's
  // (PPL(variant) / PPL(base) - 1) x 100: the perplexity increase over the base, in percent.
  double ppl_increase_pct() const { return base_ppl > 0 ? (ppl / base_ppl - 1) * 100 : 0; }
};

struct QualityResult {
  QualityFigures figures;
  bool from_cache = false;       // the variant's figures were read, not measured
  bool base_from_cache = false;  // the base's log-probabilities were read, not computed (or not needed)
};

// A line for the sweep's log while something long runs ("scoring the base ...").
using QualityLogFn = std::function<void(const std::string& line)>;

// The method for a base: `method` with n_ctx capped at the base's trained context. Errors name the base file.
Result<QualityMethod> quality_method_for(const std::string& base, QualityMethod method);

// Measures (or reads from the cache) `variant`'s quality against `base`. `base_content_hash` names the
// base's cached log-probabilities in `cache_dir`. Errors name the file or the corpus that failed; nothing
// is cached then.
Result<QualityResult> measure_variant_quality(const std::string& base, const std::string& base_content_hash,
                                              const std::string& variant, const QualityMethod& method,
                                              const std::filesystem::path& cache_dir, const QualityLogFn& log = {});

}  // namespace infertune
