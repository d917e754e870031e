// The gemma2 and gemma3 architectures (Gemma 2, Gemma 3): the llama block with
//   x = embedding * sqrt(n_embd)
//   x += post_attention_norm(W_o · attention(rope(q_norm(W_q · norm(x))), rope(k_norm(W_k · norm(x))), W_v · norm(x)))
//   x += post_ffw_norm(W_down · (gelu(W_gate · norm(x)) * (W_up · norm(x))))
// RMSNorm everywhere (the file's gains already include gemma's "1 +"), rope on the halves of each head (NEOX),
// sliding-window layers (keys of the last sliding_window positions), queries scaled as ModelConfig::attention_scale
// says, the output projection tied to token_embd, and the logits soft-capped when the file sets
// final_logit_softcapping. What differs is data: gemma3 has the per-head q/k norms (gemma2's are absent, so nothing)
// and five sliding layers with rope base 10000 for every global one; gemma2 slides every other layer and soft-caps
// each attention score (ModelConfig::attn_logit_softcap, applied inside the attention kernels).
#include <cmath>

#include "engine/arch/forward.h"
#include "engine/arch/transformer_blocks.h"

namespace infertune {

Status forward_gemma(const ForwardPass& pass, const ForwardBatch& batch) {
  const ModelConfig& c = pass.model.config();
  const ModelWeights& w = pass.model.weights();
  ForwardScratch& s = pass.scratch;
  const ParallelFor& threads = pass.threads;
  const size_t n = batch.tokens.size();

  const auto [x, xn, q, k, v, attn, proj] = block_activations(s, c, n);

  if (Status st = embed_tokens(w.token_embd, batch.tokens, x); !st) return st;
  scale_rows(x, std::sqrt(static_cast<float>(c.n_embd)));
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
    rope_queries_keys(pass.rope_for(il), batch.kv, n, c.head_dim, q, c.n_head, k, c.n_head_kv);
    store_kv(pass.cache, il, batch.kv, n, k, v);
    if (Status st = causal_attention(threads, pass.cache, il, c, batch.kv, n, q, attn, s.attention); !st) return st;
    if (Status st = linear(threads, layer.attn_output, attn, n, proj, s.xq); !st) return st;
    rms_norm_rows(proj, layer.attn_post_norm, c.rms_eps, proj);
    add_residual(x, proj);

    rms_norm_rows(x, layer.ffn_norm, c.rms_eps, xn);
    if (Status st = geglu_ffn(threads, layer, c, s, n); !st) return st;
    rms_norm_rows(proj, layer.ffn_post_norm, c.rms_eps, proj);
    add_residual(x, proj);
  }
  return finish_forward(pass, batch, x);
}

}  // namespace infertune
