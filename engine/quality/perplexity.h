#pragma once
// Perplexity as llama-perplexity computes it: the text's tokens (with BOS when the vocabulary adds one) are cut
// into chunks of n_ctx tokens; each chunk is evaluated alone (an empty cache, its first token replaced by BOS), and
// the log-likelihood of tokens n_ctx/2 + 1 .. n_ctx - 1, each predicted from the logits before it, is counted: the
// first half only gives the second half context. PPL = exp(mean negative log-likelihood); its uncertainty
// PPL * sqrt(var(nll) / (count - 1)).
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "engine/context/context.h"
#include "kernels/result.h"

namespace infertune {

struct PerplexityParams {
  uint32_t n_ctx = 512;        // tokens per chunk (the context's size must be at least this)
  int32_t n_chunks = -1;       // at most this many chunks; -1: as many as the text has
  uint32_t n_batch = 512;      // tokens per decode call (at most n_ctx)
  std::optional<int32_t> bos;  // the token a chunk starts with; none: the text's own first token
  // llama-perplexity's rule for a text: at least two chunks. Tokens from a base file (--kl-divergence) need one.
  bool need_two_chunks = true;
};

struct ChunkScore {
  double nll_sum = 0;   // sum over the chunk's scored tokens of -log p(token)
  double nll2_sum = 0;  // sum of their squares
  uint32_t count = 0;   // tokens scored
};

struct PerplexityEstimate {
  double ppl = 0;
  double ppl_error = 0;  // one standard error
  uint64_t count = 0;
  static PerplexityEstimate of(std::span<const ChunkScore> chunks);  // the running estimate over these chunks
};

// Called after each chunk with the scores so far.
using ChunkCallback = std::function<void(std::span<const ChunkScore> chunks)>;
// Called with each chunk's logits [n_ctx][n_vocab] before it is scored (the base file, KL divergence); an error stops.
using ChunkLogitsFn = std::function<Status(size_t chunk, std::span<const float> logits)>;

// The scores of each chunk of `tokens`. Errors: fewer than 2 n_ctx tokens (as llama-perplexity), a context smaller
// than n_ctx, a failed decode.
Result<std::vector<ChunkScore>> score_chunks(Context& ctx, std::span<const int32_t> tokens,
                                             const PerplexityParams& params, const ChunkCallback& on_chunk = {},
                                             const ChunkLogitsFn& on_logits = {});

// -log softmax(logits)[target], in double precision.
double negative_log_likelihood(std::span<const float> logits, int32_t target);

}  // namespace infertune
