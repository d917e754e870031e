#pragma once
// The building blocks every llama-family forward pass is made of, over a batch of token rows. Each one
// is a step a reader can check against the model's equations; the architecture files string them
// together top to bottom.
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

// out[t] = rms_norm(x[t]) * gain for every row; x, out: [n_tokens][gain.size()].
void rms_norm_rows(std::span<const float> x, std::span<const float> gain, float eps, std::span<float> out);

// y[n_tokens][w.n_rows] = x[n_tokens][w.n_cols] * W^T, weight rows split between the threads.
Status linear(const ParallelFor& threads, const WeightMatrix& w, std::span<const float> x, size_t n_tokens,
              std::span<float> y);

// Rotates every query head q [n_tokens][n_head * head_dim] and key head k [n_tokens][n_head_kv * head_dim]
// of token t by the angles of position first_pos + t.
void rope_queries_keys(const RopeParams& rope, uint32_t first_pos, size_t n_tokens, uint32_t head_dim,
                       std::span<float> q, uint32_t n_head, std::span<float> k, uint32_t n_head_kv);

// Copies k [n_tokens][k_dim] and v [n_tokens][v_dim] into the cache at positions first_pos...
void store_kv(KvCache& cache, uint32_t layer, uint32_t first_pos, size_t n_tokens, std::span<const float> k,
              std::span<const float> v);

// Causal multi-head attention with grouped KV heads: query head h of token t (at position first_pos + t)
// attends to cached positions 0..first_pos + t of KV head h / n_gqa, scores scaled by 1/sqrt(head_dim).
// q: [n_tokens][n_head * head_dim] -> out: [n_tokens][n_head * head_dim_v]. Errors come from the pool.
Status causal_attention(const ParallelFor& threads, const KvCache& cache, uint32_t layer, const ModelConfig& config,
                        uint32_t first_pos, size_t n_tokens, std::span<const float> q, std::span<float> out);

// SwiGLU feed-forward: proj = W_down (silu(W_gate xn) * (W_up xn)), over scratch.xn -> scratch.proj.
Status swiglu_ffn(const ParallelFor& threads, const LayerWeights& layer, const ModelConfig& config,
                  ForwardScratch& scratch, size_t n_tokens);

// The final norm and output projection of the rows batch.logits wants (all, or the last), from scratch.x.
Status output_logits(const ForwardPass& pass, const ForwardBatch& batch);

}  // namespace infertune
