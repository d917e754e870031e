#pragma once
// Per-run state over a loaded Model: the KV cache, the position bookkeeping, threads and scratch
// buffers. decode() evaluates a batch of tokens at the next positions (causal attention over everything
// cached so far) and returns their logits. A Context is used from one thread at a time; several may share
// one Model, and several may share one ThreadPool when they take turns using it.
//
//   auto ctx = Context::create(model, {.n_ctx = 2048, .n_threads = 4});   // its own pool of 4 threads
//   auto ctx = Context::create(model, {.n_threads = 4, .n_threads_batch = 8, .pool = pool.get()});
//   auto logits = ctx->decode(prompt, Logits::All);   // [prompt.size()][n_vocab]
//   auto next = ctx->decode(std::array{token});       // [1][n_vocab]
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/arch/forward.h"
#include "engine/context/kv_cache.h"
#include "engine/context/parallel_for.h"
#include "engine/model/model.h"
#include "engine/threading/thread_pool.h"
#include "kernels/ops/rope.h"
#include "kernels/result.h"

namespace infertune {

// The context length when ContextParams::n_ctx is 0: the trained one, capped (as llama.cpp's default).
inline constexpr uint32_t kDefaultContextCap = 4096;

struct ContextParams {
  uint32_t n_ctx = 0;            // positions the KV cache holds; 0: min(n_ctx_train, kDefaultContextCap)
  unsigned n_threads = 1;        // -t: threads for one-token steps (matmuls and attention); 0: 1
  unsigned n_threads_batch = 0;  // -tb: threads for steps of more tokens; 0: n_threads
  uint32_t n_ubatch = 512;       // a longer batch is evaluated in pieces of at most this many tokens
  // The pool to run on (placed by the caller, e.g. per the placement flags); it must outlive the Context
  // and the thread counts are capped at its size. Null: the Context starts its own, unplaced, of
  // max(n_threads, n_threads_batch) threads.
  ThreadPool* pool = nullptr;
};

enum class Logits { Last, All };

class Context {
 public:
  // Errors on an unsupported architecture or rope scaling, and when the KV cache cannot be allocated or
  // the thread pool cannot be started.
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
  Context(const Model& model, const ContextParams& params, KvCache cache, std::unique_ptr<ThreadPool> own_pool,
          ArchForwardFn forward, RopeParams rope)
      : model_(&model),
        params_(params),
        cache_(std::move(cache)),
        own_pool_(std::move(own_pool)),
        pool_(params.pool ? params.pool : own_pool_.get()),
        forward_(forward),
        rope_(rope) {}
  Status check_batch(std::span<const int32_t> tokens) const;
  // -t for a piece of one token, -tb for more (llama.cpp's rule).
  ParallelFor threads_for(size_t n_tokens) const;

  const Model* model_;
  ContextParams params_;
  KvCache cache_;
  std::unique_ptr<ThreadPool> own_pool_;  // null when params_.pool is shared
  ThreadPool* pool_;                      // the one the forward pass runs on (heap: stays put on a move)
  ArchForwardFn forward_;
  RopeParams rope_;
  ForwardScratch scratch_;
  std::vector<float> logits_;  // [n_out][n_vocab] of the last decode
  uint32_t n_past_ = 0;
};

}  // namespace infertune
