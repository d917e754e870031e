#pragma once
// Per-run state over a loaded Model: the KV cache (shared by up to n_seq_max sequences), threads and
// scratch buffers. decode(Batch) evaluates a batch of tokens of any sequences at any positions (each
// attending causally to its own sequence's cached keys) and keeps the logits the batch asked for; the
// sequence operations of the cache (kv_cache()) remove, copy, keep and shift sequences in between. A
// Context is used from one thread at a time; several may share one Model, and several may share one
// ThreadPool when they take turns using it.
//
//   auto ctx = Context::create(model, {.n_ctx = 2048, .n_threads = 4});   // its own pool of 4 threads
//   auto ctx = Context::create(model, {.n_threads = 4, .n_threads_batch = 8, .pool = pool.get()});
//   auto logits = ctx->decode(prompt, Logits::All);   // sequence 0, at its next positions: [size][n_vocab]
//   auto next = ctx->decode(std::array{token});       // [1][n_vocab]
//
//   Batch batch;                                      // several sequences at once (-np 4)
//   for (SeqId s = 0; s < 4; ++s) batch.add(tokens[s], pos[s], {s}, true);
//   if (Status st = ctx->decode(batch); !st && ctx->last_failure() == DecodeFailure::CacheFull) { ... }
//   auto row = ctx->logits_ith(2);                    // [n_vocab] of batch token 2
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

#include "engine/arch/forward.h"
#include "engine/batch/batch.h"
#include "engine/context/flash_attention.h"
#include "engine/context/rope_setup.h"
#include "engine/gpu/gpu_offload.h"
#include "engine/kv/kv_cache.h"
#include "engine/model/model.h"
#include "engine/threading/parallel_for.h"
#include "engine/threading/thread_pool.h"
#include "kernels/ops/rope.h"
#include "kernels/result.h"

namespace infertune {

// The context length when ContextParams::n_ctx is 0, as llama.cpp's tools default to, also beyond the length the
// model was trained on (make_context then warns), so that the same command works in both.
inline constexpr uint32_t kDefaultContext = 4096;
// -b and -ub when ContextParams leaves them 0, as llama.cpp's defaults.
inline constexpr uint32_t kDefaultBatch = 2048;
inline constexpr uint32_t kDefaultUbatch = 512;

struct ContextParams {
  uint32_t n_ctx = 0;                  // -c: KV cells, shared by all sequences; 0: kDefaultContext
  unsigned n_threads = 1;              // -t: threads for one-token steps (matmuls and attention); 0: 1
  unsigned n_threads_batch = 0;        // -tb: threads for steps of more tokens; 0: n_threads
  uint32_t n_batch = kDefaultBatch;    // -b: the most tokens one decode(Batch) takes (logical batch); 0: 2048
  uint32_t n_ubatch = kDefaultUbatch;  // -ub: a batch is evaluated in pieces of at most this many (<= n_batch); 0: 512
  uint32_t n_seq_max = 1;              // -np: sequence ids are 0 .. n_seq_max - 1 (at most kMaxSequences); 0: 1
  GgmlType type_k = GgmlType::F32;     // -ctk: f32, f16, bf16, q8_0, q4_0
  GgmlType type_v = GgmlType::F32;     // -ctv
  FlashAttention flash_attn = FlashAttention::Auto;  // -fa on|off|auto (flash_attention.h)
  // The pool to run on (placed by the caller, e.g. per the placement flags); it must outlive the Context
  // and the thread counts are capped at its size. Null: the Context starts its own, unplaced, of
  // max(n_threads, n_threads_batch) threads.
  ThreadPool* pool = nullptr;
  // --rope-* / --yarn-* on top of the model's rope metadata (rope_setup.h); empty: the file's rope as it is.
  RopeOverrides rope{};
  // -ngl: the last N layers run on the GPU (engine/gpu/gpu_offload.h), N > n_layers the output layer too;
  // < 0: everything. 0: the CPU alone.
  int n_gpu_layers = 0;
  int main_gpu = 0;                         // -mg: the CUDA device of -sm none (and of a single GPU)
  SplitMode split_mode = SplitMode::layer;  // -sm: how the offloaded layers spread over several GPUs
  std::vector<double> tensor_split = {};    // -ts: each GPU's share of them; empty: by free memory
  // Each device's layers given outright instead of dealt from -ngl, -sm and -ts (tests run several shares
  // on one GPU with it); empty: dealt.
  std::vector<DeviceLayers> gpu_shares = {};
  bool kv_offload = true;  // false (--no-kv-offload): the offloaded layers' K/V and attention stay on the CPU
  // Where the offloaded layers' weights come from and stay after this Context (a bench run's or a sweep
  // worker's, shared by its contexts: gpu_weight_cache.h); it must outlive the Context. Null: the Context
  // uploads its own.
  GpuWeightCache* gpu_weights = nullptr;
  // --embeddings: decode keeps, for each token that asks for output, the final-normed hidden state [n_embd]
  // (embeddings()) instead of logits, and skips the output projection; the output layer stays on the CPU.
  bool embeddings = false;
};

enum class Logits { Last, All };

// Why the last decode failed: a batch the context cannot take as it is, a KV cache without room for it
// (free sequences, or retry with fewer tokens), or a failure while computing (the pool).
enum class DecodeFailure { None, InvalidBatch, CacheFull, Compute };

class Context {
 public:
  // Errors on an unsupported architecture or rope scaling, a bad KV type or sequence count, and when the
  // KV cache cannot be allocated or the thread pool cannot be started.
  // `model` must outlive the Context.
  static Result<Context> create(const Model& model, const ContextParams& params = {});

  // Evaluates a batch: every token's K and V go into a free cache cell (one cell per token, however many
  // sequences share it), split into ubatches of n_ubatch() tokens. Errors, with the cache as it was and
  // last_failure() saying why, on an empty batch or one of more than n_batch() tokens, a token id outside
  // the vocabulary, a negative position, a token without sequences or with an id >= n_seq_max()
  // (InvalidBatch), fewer free cells than tokens (CacheFull), or a failure of the pool (Compute).
  Status decode(const Batch& batch);
  DecodeFailure last_failure() const { return last_failure_; }
  // The logits of the last decode: [n_outputs][n_vocab], one row per token that wanted them, in batch
  // order; valid until the next decode.
  std::span<const float> logits() const { return params_.embeddings ? std::span<const float>() : outputs_; }
  // The logits of batch token i [n_vocab]; errors when token i did not want logits.
  Result<std::span<const float>> logits_ith(size_t i) const;
  // With ContextParams::embeddings, the outputs of the last decode are embeddings: [n_outputs][n_embd] in
  // batch order (logits() is then empty), and embeddings_ith(i) is batch token i's [n_embd].
  std::span<const float> embeddings() const { return params_.embeddings ? outputs_ : std::span<const float>(); }
  Result<std::span<const float>> embeddings_ith(size_t i) const;

  // Sequence 0 convenience: evaluates `tokens` at positions n_past() .. n_past() + size - 1 (in pieces of
  // n_batch() when longer). Returns the logits of every token ([size][n_vocab], Logits::All) or of the
  // last ([1][n_vocab]), valid until the next call. Errors, leaving the cache unchanged, on an empty batch,
  // a token id outside the vocabulary, or more tokens than free cells ("context full"). With embeddings the
  // rows are embeddings ([..][n_embd]).
  Result<std::span<const float>> decode(std::span<const int32_t> tokens, Logits which = Logits::Last);
  // ctx.decode({1, 2, 3}): the same (a braced list would otherwise be ambiguous with a Batch).
  Result<std::span<const float>> decode(std::initializer_list<int32_t> tokens, Logits which = Logits::Last) {
    return decode(std::span<const int32_t>(tokens.begin(), tokens.size()), which);
  }

  // One past the last position of sequence 0 (0 when it is empty).
  uint32_t n_past() const { return static_cast<uint32_t>(cache_.seq_pos_max(0) + 1); }
  uint32_t n_ctx() const { return cache_.n_cells(); }
  uint32_t n_batch() const { return params_.n_batch; }
  uint32_t n_ubatch() const { return params_.n_ubatch; }
  uint32_t n_seq_max() const { return params_.n_seq_max; }
  uint32_t n_vocab() const { return model_->config().n_vocab; }
  bool flash_attention() const { return flash_; }
  const ContextParams& params() const { return params_; }  // with the defaults filled in
  const Model& model() const { return *model_; }

  // The KV cache: its sequence operations (seq_rm, seq_cp, seq_keep, seq_add, seq_pos_*) and accounting.
  KvCache& kv_cache() { return cache_; }
  const KvCache& kv_cache() const { return cache_; }
  size_t kv_bytes() const { return cache_.bytes(); }                      // allocated (reserved) for n_ctx cells
  size_t kv_bytes_per_token() const { return cache_.bytes_per_token(); }  // one cell: K and V of every layer
  size_t kv_bytes_used() const { return cache_.bytes_used(); }            // the cells in use

  // The GPU part of the context (-ngl > 0), or null.
  const GpuOffload* gpu() const { return gpu_.get(); }

  // Forgets every cached position of every sequence.
  void clear() { cache_.clear(); }

 private:
  Context(const Model& model, const ContextParams& params, KvCache cache, std::unique_ptr<ThreadPool> own_pool,
          ArchForwardFn forward, RopeParams rope)
      : model_(&model),
        params_(params),
        cache_(std::move(cache)),
        own_pool_(std::move(own_pool)),
        pool_(params.pool ? params.pool : own_pool_.get()),
        forward_(forward),
        rope_(rope),
        layer_rope_(layer_ropes(model.config(), rope)),
        flash_(resolve_flash_attention(params.flash_attn)) {}
  Status check_batch(const Batch& batch) const;
  Status evaluate(const Batch& batch);
  // -t for a piece of one token, -tb for more (llama.cpp's rule).
  ParallelFor threads_for(size_t n_tokens) const;
  // The length of an output row: n_vocab, or n_embd with embeddings.
  size_t output_width() const;
  Result<std::span<const float>> output_row(size_t i, const char* what) const;

  const Model* model_;
  ContextParams params_;
  KvCache cache_;
  std::unique_ptr<ThreadPool> own_pool_;  // null when params_.pool is shared
  ThreadPool* pool_;                      // the one the forward pass runs on (heap: stays put on a move)
  ArchForwardFn forward_;
  RopeParams rope_;
  std::vector<RopeParams> layer_rope_;  // per layer when they differ (layer_ropes), else empty
  bool flash_;
  ForwardScratch scratch_;
  std::unique_ptr<GpuOffload> gpu_;  // the offloaded layers, their weights, K/V and activations
  // The last decode's rows of output: [n_outputs][output_width()], logits or (params_.embeddings) embeddings.
  std::vector<float> outputs_;
  std::vector<int32_t> output_of_;  // [batch size] row of outputs_ for each token of the last batch, or -1
  std::vector<SeqSet> seqs_;        // [batch size] the batch's sequence ids as sets
  std::vector<uint32_t> placed_;    // cells taken by the decode in progress (released if it fails)
  KvUbatch ubatch_;
  Batch sequence_batch_;       // the convenience decode's batch (kept: no allocation per token)
  std::vector<float> joined_;  // the convenience decode's logits when it takes several batches
  DecodeFailure last_failure_ = DecodeFailure::None;
};

}  // namespace infertune
