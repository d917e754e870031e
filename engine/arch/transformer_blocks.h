#pragma once
// The building blocks every llama-family forward pass is made of, over a batch of token rows. Each one
// is a step a reader can check against the model's equations; the architecture files string them
// together top to bottom.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "engine/arch/forward.h"
#include "engine/arch/op_profile.h"
#include "engine/kv/kv_cache.h"
#include "engine/model/model.h"
#include "engine/threading/parallel_for.h"
#include "kernels/matmul/quantized_activations.h"
#include "kernels/ops/rope.h"
#include "kernels/result.h"

namespace infertune {

// The first n_rows rows of `width` floats of a scratch buffer.
inline std::span<float> rows(std::vector<float>& buffer, size_t n_rows, size_t width) {
  return {buffer.data(), n_rows * width};
}

// The per-token activations of one block, as views of the scratch buffers sized for n tokens:
// x [n][n_embd] (the residual stream), xn [n][n_embd] (normed), q [n][q_dim], k [n][k_dim], v [n][v_dim],
// attn [n][attn_out_dim], proj [n][n_embd] (a sub-layer's output before it is added to x).
struct BlockActivations {
  std::span<float> x, xn, q, k, v, attn, proj;
};
BlockActivations block_activations(ForwardScratch& scratch, const ModelConfig& config, size_t n_tokens);

// x[i] = row tokens[i] of the embedding table; x: [n_tokens][n_embd].
Status embed_tokens(const WeightMatrix& table, std::span<const int32_t> tokens, std::span<float> x);

// x += proj, the residual add after a sub-layer; x, proj: [n_tokens][n_embd].
void add_residual(std::span<float> x, std::span<const float> proj);

// out[t] = rms_norm(x[t]) * gain for every row; x, out: [n_tokens][gain.size()]; out may be x. With a
// head-sized gain on [n_tokens][n_heads * head_dim] this normalizes every head (gemma3's query and key norms). An
// empty gain (a norm the model does not have) does nothing.
void rms_norm_rows(std::span<const float> x, std::span<const float> gain, float eps, std::span<float> out);

// x *= factor, every value (gemma3 scales its embeddings by sqrt(n_embd)).
void scale_rows(std::span<float> x, float factor);

// x [n_tokens][n_cols] quantized once, token ranges split between the threads, into xq for every weight
// matrix in `readers` (the projections that read this input: q/k/v, gate/up; all n_cols wide). Float
// weight types need nothing quantized. xq keeps a pointer to x.
Status quantize_input(const ParallelFor& threads, std::initializer_list<const WeightMatrix*> readers,
                      std::span<const float> x, size_t n_tokens, QuantizedActivations& xq);

// y[n_tokens][w.n_rows] = x[n_tokens][w.n_cols] * W^T, weight rows split between the threads, from x as
// quantized by quantize_input (w among its readers; an error otherwise).
Status linear(const ParallelFor& threads, const WeightMatrix& w, const QuantizedActivations& xq, std::span<float> y);

// One product of a group that reads the same quantized input.
struct LinearOutput {
  const WeightMatrix* w;
  std::span<float> y;  // [n_tokens][w->n_rows]
};

// linear() of every output of the group (q/k/v, gate/up), as one parallel job over their rows in turn:
// the threads meet once instead of once per matrix, and the small matrices (k, v) leave no thread idle at
// their end. Each row is computed as linear() computes it, so the bits are the same. Timed as `op`. Float
// weights that a batch would run on oneDNN go through linear() one by one.
Status linear_group(const ParallelFor& threads, ProfiledOp op, std::initializer_list<LinearOutput> outputs,
                    const QuantizedActivations& xq);

// One product of a batch whose members each read their own quantized input (one per expert).
struct LinearJob {
  const WeightMatrix* w;
  const QuantizedActivations* xq;  // quantized by quantize_input with w among its readers
  std::span<float> y;              // [xq->n_tokens()][w->n_rows]
};

// linear() of every job as one parallel job over their rows in turn, handed out in chunks as threads finish
// (the jobs' token counts differ). Each row is computed as linear() computes it. Float weights that a batch
// would run on oneDNN go through linear() one by one.
Status linear_jobs(const ParallelFor& threads, ProfiledOp op, std::span<const LinearJob> jobs);

// The same for an input only w reads: quantizes x into xq, then the product.
Status linear(const ParallelFor& threads, const WeightMatrix& w, std::span<const float> x, size_t n_tokens,
              std::span<float> y, QuantizedActivations& xq);

// The same with the quantized input in a buffer of the calling thread (for callers without scratch).
Status linear(const ParallelFor& threads, const WeightMatrix& w, std::span<const float> x, size_t n_tokens,
              std::span<float> y);

// Rotates every query head q [n_tokens][n_head * head_dim] and key head k [n_tokens][n_head_kv * head_dim]
// of token t by the angles of its position kv.positions[t].
void rope_queries_keys(const RopeParams& rope, const KvUbatch& kv, size_t n_tokens, uint32_t head_dim,
                       std::span<float> q, uint32_t n_head, std::span<float> k, uint32_t n_head_kv);

// Encodes k [n_tokens][k_dim] and v [n_tokens][v_dim] of token t into layer `layer` of cell kv.cells[t].
void store_kv(KvCache& cache, uint32_t layer, const KvUbatch& kv, size_t n_tokens, std::span<const float> k,
              std::span<const float> v);

// The index in g.key_cells of the first key row i of group g sees on a layer with a sliding `window`: the first at a
// position past pos - window (0 without a window).
uint32_t window_start(const KvUbatch& kv, const KvAttentionGroup& g, size_t i, uint32_t window);

// Multi-head attention with grouped KV heads over the cache: query head h of token t attends to the keys
// its KvUbatch group lists for it (its sequence's cells at positions up to its own) in KV head h / n_gqa,
// scores scaled by config.attention_score_scale(), with the flash or the standard kernel (kv.flash_attention) of the
// best attention variant. q: [n_tokens][n_head * head_dim] -> out: [n_tokens][n_head * head_dim_v].
// Work is split per engine/arch/attention_split.h (problems of one KV head x up to 16 query rows, their
// keys split too when threads would otherwise wait). `scratch` holds one AttentionScratch per pool thread.
// Errors come from the pool or a bad problem.
// On a sliding layer (config.is_sliding_layer) a token at position p sees only keys at positions past
// p - sliding_window: its rows whose window starts after the sequence's first key become problems of their
// own, over the window's cells. `sinks` [n_head] (gpt-oss's attention sinks, empty: none) join each head's softmax
// denominator (AttentionProblem::sinks).
Status causal_attention(const ParallelFor& threads, const KvCache& cache, uint32_t layer, const ModelConfig& config,
                        const KvUbatch& kv, size_t n_tokens, std::span<const float> q, std::span<float> out,
                        std::span<AttentionScratch> scratch, std::span<const float> sinks = {});

// The three matrices of a gated feed-forward (a dense layer's, or one expert's).
struct GatedMatrices {
  const WeightMatrix* gate;  // [width][n_in]
  const WeightMatrix* up;    // [width][n_in]
  const WeightMatrix* down;  // [n_out][width]
};
// silu and gelu gate `up`; swiglu_oai is gpt-oss's clamped unit (kernels/ops/elementwise.h).
enum class GateKind { silu, gelu, swiglu_oai };

// gate = act(gate) * up over n rows of `width`, token rows split between the threads.
Status gate_rows(const ParallelFor& threads, GateKind kind, std::span<float> gate, std::span<const float> up, size_t n,
                 size_t width);

// out = W_down (act(W_gate x) * (W_up x)) for x [n][n_in] -> out [n][n_out], through scratch.gate, .up and .xq
// (sized for n rows of the gate's width).
Status gated_product(const ParallelFor& threads, const GatedMatrices& m, GateKind kind, std::span<const float> x,
                     size_t n, std::span<float> out, ForwardScratch& scratch);

// SwiGLU feed-forward: proj = W_down (silu(W_gate xn) * (W_up xn)), over scratch.xn -> scratch.proj.
Status swiglu_ffn(const ParallelFor& threads, const LayerWeights& layer, const ModelConfig& config,
                  ForwardScratch& scratch, size_t n_tokens);

// GELU-gated feed-forward (gemma): proj = W_down (gelu(W_gate xn) * (W_up xn)), as swiglu_ffn.
Status geglu_ffn(const ParallelFor& threads, const LayerWeights& layer, const ModelConfig& config,
                 ForwardScratch& scratch, size_t n_tokens);

// The final norm and output projection of the rows batch.output_rows names, from scratch.x, and the soft cap
// of the logits when the model has one; with batch.embeddings the normed rows alone.
Status output_logits(const ForwardPass& pass, const ForwardBatch& batch);

// The layers the CPU runs: all of them, or those before pass.offload's first.
uint32_t cpu_layer_count(const ForwardPass& pass);

// After the CPU's layers: the offloaded layers (pass.offload) on x, then the output layer wherever it runs.
Status finish_forward(const ForwardPass& pass, const ForwardBatch& batch, std::span<float> x);

}  // namespace infertune
