#pragma once
// Embeds token sequences with a Context that keeps embeddings (ContextParams::embeddings): each input runs
// in a sequence of its own, several inputs share a decode while their tokens fit the logical batch (-b), the
// free cells and the context's sequences, and an input longer than a batch goes in pieces (attention is
// causal: its earlier tokens wait in the cache). Pooling and normalization follow (pooling.h,
// embedding_norm.h); the cache is empty again afterwards. A bidirectional model's inputs are never cut: each goes
// whole into one ubatch.
//
//   auto ctx = Context::create(model, {.n_ctx = 2048, .n_seq_max = 8, .embeddings = true});
//   Embedder embedder(*ctx, {.pooling = Pooling::mean});
//   auto vectors = embedder.embed(inputs);   // inputs: token ids each; a vector per input
//   (*vectors)[0].row(0)                     // [n_embd], euclidean-normalized
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/context/context.h"
#include "engine/embedding/embedding_norm.h"
#include "engine/embedding/pooling.h"
#include "kernels/result.h"

namespace infertune {

struct EmbeddingParams {
  Pooling pooling = Pooling::mean;
  int normalize = kEuclideanNorm;  // embedding_norm.h's modes, applied to every row given back
};

// One input's result: a row (pooled), or a row per token (Pooling::none).
struct Embedding {
  std::vector<float> values;  // [n_rows][n_embd]
  size_t n_embd = 0;
  size_t n_rows() const { return n_embd == 0 ? 0 : values.size() / n_embd; }
  std::span<const float> row(size_t i) const { return std::span<const float>(values).subspan(i * n_embd, n_embd); }
};

class Embedder {
 public:
  // `ctx` must keep embeddings and outlive the Embedder, which uses it alone while it embeds.
  Embedder(Context& ctx, EmbeddingParams params) : ctx_(&ctx), params_(params) {}

  // One Embedding per input, in order. Errors (the cache left empty) on a context that keeps logits, an empty
  // input, one longer than the context, or a failed decode.
  Result<std::vector<Embedding>> embed(std::span<const std::vector<int32_t>> inputs);

  const EmbeddingParams& params() const { return params_; }

  // The most tokens one input may have in `ctx`: its cells, and for a bidirectional model (attention.causal =
  // false, whose tokens see the later ones too) one ubatch, since an input is never cut there.
  static uint32_t max_input_tokens(const Context& ctx);

 private:
  struct InFlight;
  Status check(std::span<const std::vector<int32_t>> inputs) const;
  Status run(std::span<const std::vector<int32_t>> inputs, std::vector<Embedding>& out);
  bool wants_output(size_t pos, size_t length) const;
  // Gathers an input's outputs of the batch just decoded, and makes its Embedding once it is whole.
  void collect(InFlight& input, size_t n_embd);
  Embedding finish(InFlight& input, size_t length, size_t n_embd) const;

  Context* ctx_;
  EmbeddingParams params_;
  Batch batch_;
};

}  // namespace infertune
