#include "engine/quality/perplexity.h"

#include <algorithm>
#include <cmath>

namespace infertune {

double negative_log_likelihood(std::span<const float> logits, int32_t target) {
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - max);
  return std::log(sum) - (static_cast<double>(logits[static_cast<size_t>(target)]) - max);
}

PerplexityEstimate PerplexityEstimate::of(std::span<const ChunkScore> chunks) {
  double nll = 0, nll2 = 0;
  uint64_t count = 0;
  for (const ChunkScore& c : chunks) {
    nll += c.nll_sum;
    nll2 += c.nll2_sum;
    count += c.count;
  }
  PerplexityEstimate e;
  e.count = count;
  if (count == 0) return e;
  const double mean = nll / static_cast<double>(count);
  e.ppl = std::exp(mean);
  const double variance = nll2 / static_cast<double>(count) - mean * mean;
  if (variance > 0 && count > 1) e.ppl_error = e.ppl * std::sqrt(variance / static_cast<double>(count - 1));
  return e;
}

Result<std::vector<ChunkScore>> score_chunks(Context& ctx, std::span<const int32_t> tokens,
                                             const PerplexityParams& params, const ChunkCallback& on_chunk,
                                             const ChunkLogitsFn& on_logits) {
  const size_t n_ctx = params.n_ctx;
  if (n_ctx < 2) return fail("a context of {} tokens is too small to score (at least 2)", n_ctx);
  if (tokens.size() < (params.need_two_chunks ? 2 : 1) * n_ctx) {
    return fail("the text has {} tokens; a context of {} needs at least {} ({} chunks)", tokens.size(), n_ctx,
                (params.need_two_chunks ? 2 : 1) * n_ctx, params.need_two_chunks ? "two" : "one");
  }
  if (ctx.n_ctx() < n_ctx) return fail("the context has {} cells, fewer than -c {}", ctx.n_ctx(), n_ctx);
  size_t n_chunks = tokens.size() / n_ctx;
  if (params.n_chunks >= 0) n_chunks = std::min(n_chunks, static_cast<size_t>(params.n_chunks));
  const size_t n_batch = std::clamp<size_t>(params.n_batch, 1, n_ctx);
  const size_t first = n_ctx / 2;
  const size_t n_vocab = ctx.n_vocab();
  std::vector<ChunkScore> scores;
  std::vector<int32_t> chunk(n_ctx);
  std::vector<float> logits(n_ctx * n_vocab);
  for (size_t c = 0; c < n_chunks; ++c) {
    std::copy_n(tokens.begin() + static_cast<std::ptrdiff_t>(c * n_ctx), n_ctx, chunk.begin());
    if (params.bos) chunk[0] = *params.bos;
    ctx.kv_cache().clear();
    for (size_t b = 0; b < n_ctx; b += n_batch) {
      const size_t size = std::min(n_batch, n_ctx - b);
      auto out = ctx.decode(std::span<const int32_t>(chunk).subspan(b, size), Logits::All);
      if (!out) return fail("chunk {}: {}", c + 1, out.error().message);
      std::copy(out->begin(), out->end(), logits.begin() + static_cast<std::ptrdiff_t>(b * n_vocab));
    }
    if (on_logits) {
      if (Status s = on_logits(c, logits); !s) return s.error();
    }
    ChunkScore score;
    for (size_t i = first; i + 1 < n_ctx; ++i) {
      const double nll = negative_log_likelihood(std::span<const float>(logits).subspan(i * n_vocab, n_vocab),
                                                 tokens[c * n_ctx + i + 1]);
      score.nll_sum += nll;
      score.nll2_sum += nll * nll;
      score.count += 1;
    }
    scores.push_back(score);
    if (on_chunk) on_chunk(scores);
  }
  return scores;
}

}  // namespace infertune
