// The qwen3 architecture (Qwen3 dense models, and the Qwen3-Embedding models built on them): the llama block
// without biases, with an RMSNorm over each query and key head (gains [head_dim], shared by the heads)
// before rope on the two halves of each head (NEOX), and queries scaled by 1/sqrt(head_dim), whose
// head_dim (attention.key_length) need not be n_embd / n_head. The output is tied to token_embd when
// output.weight is absent (the 0.6B to 4B models). qwen3moe (Qwen3-30B-A3B, 235B-A22B) is the same block with
// the feed-forward a mixture of SwiGLU experts (engine/arch/expert_ffn.h).
#include "engine/arch/expert_ffn.h"
#include "engine/arch/forward.h"
#include "engine/arch/transformer_blocks.h"

namespace infertune {

Status forward_qwen3(const ForwardPass& pass, const ForwardBatch& batch) {
  const ModelConfig& c = pass.model.config();
  const ModelWeights& w = pass.model.weights();
  ForwardScratch& s = pass.scratch;
  const ParallelFor& threads = pass.threads;
  const size_t n = batch.tokens.size();

  const auto [x, xn, q, k, v, attn, proj] = block_activations(s, c, n);

  if (Status st = embed_tokens(w.token_embd, batch.tokens, x); !st) return st;
  for (uint32_t il = 0; il < cpu_layer_count(pass); ++il) {
    const LayerWeights& layer = w.layers[il];

    rms_norm_rows(x, layer.attn_norm, c.rms_eps, xn);
    if (Status st = quantize_input(threads, {&layer.attn_q, &layer.attn_k, &layer.attn_v}, xn, n, s.xq); !st) return st;
    if (Status st = linear_group(threads, ProfiledOp::attn_qkv,
                                 {{&layer.attn_q, q}, {&layer.attn_k, k}, {&layer.attn_v, v}}, s.xq);
        !st) {
      return st;
    }
    rms_norm_rows(q, layer.attn_q_norm, c.rms_eps, q);
    rms_norm_rows(k, layer.attn_k_norm, c.rms_eps, k);
    rope_queries_keys(pass.rope, batch.kv, n, c.head_dim, q, c.n_head, k, c.n_head_kv);
    store_kv(pass.cache, il, batch.kv, n, k, v);
    if (Status st = causal_attention(threads, pass.cache, il, c, batch.kv, n, q, attn, s.attention); !st) return st;
    if (Status st = linear(threads, layer.attn_output, attn, n, proj, s.xq); !st) return st;
    add_residual(x, proj);

    rms_norm_rows(x, layer.ffn_norm, c.rms_eps, xn);
    if (Status st = silu_ffn(threads, layer, c, s, n); !st) return st;
    add_residual(x, proj);
  }
  return finish_forward(pass, batch, x);
}

}  // namespace infertune
