// The gpt-oss architecture (OpenAI's gpt-oss-20b and -120b): a pre-norm block
//   x += W_o · attention(rope(W_q · norm(x) + b_q), rope(W_k · norm(x) + b_k), W_v · norm(x) + b_v) + b_o
//   x += experts(norm(x))
// with biases on every attention projection, an attention sink per query head (a logit that joins the softmax's
// denominator, so a head may attend to nothing), every other layer (the even ones) sliding over the last
// sliding_window positions, rope on the halves of each head with YaRN from the file's rope.scaling keys, and a
// mixture of experts with a biased router, biased experts and the clamped SwiGLU (engine/arch/expert_ffn.h).
#include "engine/arch/expert_ffn.h"
#include "engine/arch/forward.h"
#include "engine/arch/op_profile.h"
#include "engine/arch/transformer_blocks.h"
#include "kernels/ops/elementwise.h"

namespace infertune {

Status forward_gpt_oss(const ForwardPass& pass, const ForwardBatch& batch) {
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
    {
      const OpTimer timer(ProfiledOp::residual);
      add_bias_rows(q, layer.attn_q_bias);
      add_bias_rows(k, layer.attn_k_bias);
      add_bias_rows(v, layer.attn_v_bias);
    }
    rope_queries_keys(pass.rope_for(il), batch.kv, n, c.head_dim, q, c.n_head, k, c.n_head_kv);
    store_kv(pass.cache, il, batch.kv, n, k, v);
    if (Status st = causal_attention(threads, pass.cache, il, c, batch.kv, n, q, attn, s.attention, layer.attn_sinks);
        !st) {
      return st;
    }
    if (Status st = linear(threads, layer.attn_output, attn, n, proj, s.xq); !st) return st;
    add_bias_rows(proj, layer.attn_output_bias);
    add_residual(x, proj);

    rms_norm_rows(x, layer.ffn_norm, c.rms_eps, xn);
    if (Status st = expert_ffn(threads, layer, c, s, n); !st) return st;
    add_residual(x, proj);
  }
  return finish_forward(pass, batch, x);
}

}  // namespace infertune
