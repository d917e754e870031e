#pragma once
// Per-run state over a loaded Model: the KV cache, the position bookkeeping, threads and scratch
// buffers. decode() evaluates a batch of tokens at the next positions (causal attention over everything
// cached so far) and returns their logits. A Context is used from one thread at a time; several may share
// one Model.
//
//   auto ctx = Context::create(model, {.n_ctx = 2048, .n_threads = 4});
//   auto logits = ctx->decode(prompt, Logits::All);   // [prompt.size()][n_vocab]
//   auto next = ctx->decode(std::array{token});       // [1][n_vocab]
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/arch/forward.h"
#include "engine/context/kv_cache.h"
#include "engine/context/parallel_for.h"
#include "engine/model/model.h"
#include "kernels/ops/rope.h"
#include "kernels/result.h"

namespace infertune {

// The context length when ContextParams::n_ctx is 0: the trained one, capped (as llama.cpp's default).
inline constexpr uint32_t kDefaultContextCap = 4096;

struct ContextParams {
  uint32_t n_ctx = 0;       // positions the KV cache holds; 0: min(n_ctx_train, kDefaultContextCap)
  unsigned n_threads = 1;   // threads for the matmuls and attention
  uint32_t n_ubatch = 512;  // a longer batch is evaluated in pieces of at most this many tokens
};

enum class Logits { Last, All };

class Context {
 public:
  // Errors on an unsupported architecture or rope scaling, and when the KV cache cannot be allocated.
  // `model` must outlive the Context.
  static Result<Context> create(const Model& model, const ContextParams& params = {});

  // Evaluates `tokens` at positions n_past() .. n_past() + size - 1 and advances n_past(). Returns the
  // logits of every token ([size][n_vocab], Logits::All) or of the last ([1][n_vocab]), valid until the
  // next call. Errors, leaving n_past() unchanged, on an empty batch, a token id outside the vocabulary,
  // or a batch that does not fit in the remaining context.
  Result<std::span<const float>> decode(std::span<const int32_t> tokens, Logits which = Logits::Last);

  uint32_t n_past() const { return n_past_; }
  uint32_t n_ctx() const { return cache_.n_ctx(); }
  uint32_t n_vocab() const { return model_->config().n_vocab; }
  size_t kv_bytes() const { return cache_.bytes(); }
  const Model& model() const { return *model_; }

  // Forgets every cached position (the next decode starts at position 0).
  void clear() { n_past_ = 0; }

 private:
  Context(const Model& model, const ContextParams& params, KvCache cache, ArchForwardFn forward, RopeParams rope)
      : model_(&model),
        params_(params),
        cache_(std::move(cache)),
        threads_(params.n_threads),
        forward_(forward),
        rope_(rope) {}
  Status check_batch(std::span<const int32_t> tokens) const;

  const Model* model_;
  ContextParams params_;
  KvCache cache_;
  ParallelFor threads_;
  ArchForwardFn forward_;
  RopeParams rope_;
  ForwardScratch scratch_;
  std::vector<float> logits_;  // [n_out][n_vocab] of the last decode
  uint32_t n_past_ = 0;
};

}  // namespace infertune
