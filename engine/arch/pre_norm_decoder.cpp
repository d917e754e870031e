// The pre-norm decoder block that llama, qwen2, qwen3, gpt-oss and phi3 share (and their mixture-of-experts forms
// qwen2moe, qwen3moe, Mixtral-style llama):
//   x += W_o · attention(rope(qk_norm(W_q · norm(x) + b_q)), rope(qk_norm(W_k · norm(x) + b_k)), W_v · norm(x) + b_v) +
//   b_o x += ffn(norm(x))
// with RMSNorm, grouped KV heads, the output projection tied to token_embd when output.weight is absent. What the
// architectures add is data a model without it does not have (an empty tensor adds nothing):
//   llama    rope on interleaved pairs, llama-3 frequency factors when rope_freqs.weight exists (in pass.rope); with
//            {arch}.expert_count (Mixtral) the feed-forward is a mixture of SwiGLU experts
//   qwen2    biases on Q, K and V, rope on the two halves of each head (NEOX); qwen2moe: experts plus a shared expert
//            behind a sigmoid gate
//   qwen3    no biases; an RMSNorm over each query and key head (gains [head_dim]) before rope, heads as wide as
//            attention.key_length; qwen3moe: experts
//   gpt-oss  biases on every projection, an attention sink per query head, the even layers sliding over the last
//            sliding_window positions, YaRN rope, and experts with biases and the clamped SwiGLU
//   phi3     q/k/v and gate/up stored fused (the loader cuts them into the same matrices: engine/model/model.h), NEOX
//            rope, LongRoPE's long or short frequency factors by context length (in pass.rope), rotation of only the
//            first rope.dimension_count dimensions of a head (Phi-4-mini)
// The feed-forward is silu_ffn's (engine/arch/expert_ffn.h): dense SwiGLU, or the experts.
#include "engine/arch/expert_ffn.h"
#include "engine/arch/forward.h"
#include "engine/arch/op_profile.h"
#include "engine/arch/transformer_blocks.h"
#include "kernels/ops/elementwise.h"

namespace infertune {
namespace {

// q, k, v of the normed rows xn, with the biases and per-head norms the layer has.
Status project_qkv(const ForwardPass& pass, const LayerWeights& layer, size_t n, const BlockActivations& a) {
  const ModelConfig& c = pass.model.config();
  ForwardScratch& s = pass.scratch;
  if (Status st = quantize_input(pass.threads, {&layer.attn_q, &layer.attn_k, &layer.attn_v}, a.xn, n, s.xq); !st) {
    return st;
  }
  if (Status st = linear_group(pass.threads, ProfiledOp::attn_qkv,
                               {{&layer.attn_q, a.q}, {&layer.attn_k, a.k}, {&layer.attn_v, a.v}}, s.xq);
      !st) {
    return st;
  }
  if (!layer.attn_q_bias.empty() || !layer.attn_k_bias.empty() || !layer.attn_v_bias.empty()) {
    const OpTimer timer(ProfiledOp::residual);
    add_bias_rows(a.q, layer.attn_q_bias);
    add_bias_rows(a.k, layer.attn_k_bias);
    add_bias_rows(a.v, layer.attn_v_bias);
  }
  rms_norm_rows(a.q, layer.attn_q_norm, c.rms_eps, a.q);
  rms_norm_rows(a.k, layer.attn_k_norm, c.rms_eps, a.k);
  return {};
}

// proj = the attention sub-layer's output for layer il (before the residual add).
Status self_attention(const ForwardPass& pass, const ForwardBatch& batch, uint32_t il, const BlockActivations& a) {
  const ModelConfig& c = pass.model.config();
  const LayerWeights& layer = pass.model.weights().layers[il];
  ForwardScratch& s = pass.scratch;
  const size_t n = batch.tokens.size();
  rms_norm_rows(a.x, layer.attn_norm, c.rms_eps, a.xn);
  if (Status st = project_qkv(pass, layer, n, a); !st) return st;
  rope_queries_keys(pass.rope_for(il), batch.kv, n, c.head_dim, a.q, c.n_head, a.k, c.n_head_kv);
  store_kv(pass.cache, il, batch.kv, n, a.k, a.v);
  if (Status st =
          causal_attention(pass.threads, pass.cache, il, c, batch.kv, n, a.q, a.attn, s.attention, layer.attn_sinks);
      !st) {
    return st;
  }
  if (Status st = linear(pass.threads, layer.attn_output, a.attn, n, a.proj, s.xq); !st) return st;
  add_bias_rows(a.proj, layer.attn_output_bias);
  return {};
}

}  // namespace

Status forward_pre_norm_decoder(const ForwardPass& pass, const ForwardBatch& batch) {
  const ModelConfig& c = pass.model.config();
  const ModelWeights& w = pass.model.weights();
  const size_t n = batch.tokens.size();
  const BlockActivations a = block_activations(pass.scratch, c, n);

  if (Status st = embed_tokens(w.token_embd, batch.tokens, a.x); !st) return st;
  for (uint32_t il = 0; il < cpu_layer_count(pass); ++il) {
    if (Status st = self_attention(pass, batch, il, a); !st) return st;
    add_residual(a.x, a.proj);

    rms_norm_rows(a.x, w.layers[il].ffn_norm, c.rms_eps, a.xn);
    if (Status st = silu_ffn(pass.threads, w.layers[il], c, pass.scratch, n); !st) return st;
    add_residual(a.x, a.proj);
  }
  return finish_forward(pass, batch, a.x);
}

}  // namespace infertune
