// The llama architecture (Llama 1/2/3, TinyStories, Mistral-style GQA): pre-norm blocks of
//   x += W_o · attention(rope(W_q · norm(x)), rope(W_k · norm(x)), W_v · norm(x))
//   x += W_down · (silu(W_gate · norm(x)) * (W_up · norm(x)))
// with RMSNorm, rope on interleaved pairs (llama-3 frequency factors when rope_freqs.weight exists, in
// pass.rope), grouped KV heads, and the output projection tied to token_embd when output.weight is absent.
// With {arch}.expert_count (Mixtral) the feed-forward is a mixture of SwiGLU experts (engine/arch/expert_ffn.h).
#include "engine/arch/expert_ffn.h"
#include "engine/arch/forward.h"
#include "engine/arch/transformer_blocks.h"

namespace infertune {

Status forward_llama(const ForwardPass& pass, const ForwardBatch& batch) {
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
