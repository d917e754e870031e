#pragma once
// The tensors each supported architecture stores, with the shapes a ModelConfig implies. One table per
// architecture (data, in arch_tensors.cpp), shared by the loader's validation and the synthesizer, so
// that what we write is exactly what we accept.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/model_config.h"

namespace infertune {

enum class TensorRole {
  TokenEmbedding,    // token_embd.weight   [n_embd, n_vocab]
  RopeFreqs,         // rope_freqs.weight   [n_rot / 2]
  RopeFactorsLong,   // rope_factors_long.weight  [n_rot / 2] (phi3's LongRoPE: divisors past the original context)
  RopeFactorsShort,  // rope_factors_short.weight [n_rot / 2] (phi3's LongRoPE: divisors within it)
  OutputNorm,        // output_norm.weight  [n_embd]
  Output,            // output.weight       [n_embd, n_vocab] (absent when tied)
  AttnNorm,          // blk.N.attn_norm.weight   [n_embd]
  AttnQ,             // blk.N.attn_q.weight      [n_embd, n_head * head_dim]
  AttnK,             // blk.N.attn_k.weight      [n_embd, n_head_kv * head_dim]
  AttnV,             // blk.N.attn_v.weight      [n_embd, n_head_kv * head_dim_v]
  AttnQkv,           // blk.N.attn_qkv.weight    [n_embd, q_dim + k_dim + v_dim] (phi3: q, k and v rows in one matrix)
  AttnQBias,         // blk.N.attn_q.bias        [n_head * head_dim]      (qwen2)
  AttnKBias,         // blk.N.attn_k.bias        [n_head_kv * head_dim]   (qwen2)
  AttnVBias,         // blk.N.attn_v.bias        [n_head_kv * head_dim_v] (qwen2)
  AttnQNorm,         // blk.N.attn_q_norm.weight [head_dim] (gemma3: RMSNorm of each query head)
  AttnKNorm,         // blk.N.attn_k_norm.weight [head_dim] (gemma3: RMSNorm of each key head)
  AttnOutput,        // blk.N.attn_output.weight [n_head * head_dim_v, n_embd]
  AttnOutputBias,    // blk.N.attn_output.bias   [n_embd] (gpt-oss)
  AttnSinks,         // blk.N.attn_sinks.weight  [n_head] (gpt-oss: a logit per head in the softmax's denominator)
  AttnPostNorm,      // blk.N.post_attention_norm.weight [n_embd] (gemma3: norm of the attention's output)
  FfnNorm,           // blk.N.ffn_norm.weight    [n_embd]
  FfnGate,           // blk.N.ffn_gate.weight    [n_embd, n_ff]
  FfnUp,             // blk.N.ffn_up.weight      [n_embd, n_ff]
  FfnGateUp,         // blk.N.ffn_up.weight      [n_embd, 2 * n_ff] (phi3: the gate's rows, then the up rows)
  FfnDown,           // blk.N.ffn_down.weight    [n_ff, n_embd]
  FfnPostNorm,       // blk.N.post_ffw_norm.weight [n_embd] (gemma3: norm of the feed-forward's output)
  FfnGateInp,        // blk.N.ffn_gate_inp.weight  [n_embd, n_expert] (the router of a mixture of experts)
  FfnGateExps,       // blk.N.ffn_gate_exps.weight [n_embd, n_ff_exp, n_expert] (every expert's ffn_gate)
  FfnUpExps,         // blk.N.ffn_up_exps.weight   [n_embd, n_ff_exp, n_expert]
  FfnDownExps,       // blk.N.ffn_down_exps.weight [n_ff_exp, n_embd, n_expert]
  FfnGateInpBias,    // blk.N.ffn_gate_inp.bias    [n_expert] (gpt-oss: the router's bias)
  FfnGateExpsBias,   // blk.N.ffn_gate_exps.bias   [n_ff_exp, n_expert] (gpt-oss: each expert's biases)
  FfnUpExpsBias,     // blk.N.ffn_up_exps.bias     [n_ff_exp, n_expert]
  FfnDownExpsBias,   // blk.N.ffn_down_exps.bias   [n_embd, n_expert]
  FfnGateInpShexp,   // blk.N.ffn_gate_inp_shexp.weight [n_embd] (qwen2moe: the shared expert's sigmoid gate)
  FfnGateShexp,      // blk.N.ffn_gate_shexp.weight [n_embd, n_ff_shexp]
  FfnUpShexp,        // blk.N.ffn_up_shexp.weight   [n_embd, n_ff_shexp]
  FfnDownShexp,      // blk.N.ffn_down_shexp.weight [n_ff_shexp, n_embd]
};

std::string_view tensor_role_name(TensorRole role);  // "attn_q", "token_embd", ...
bool is_norm_role(TensorRole role);                  // RMSNorm gains
bool is_bias_role(TensorRole role);
bool is_expert_role(TensorRole role);  // the 3-D stacks of expert matrices

struct TensorSpec {
  std::string name;  // "blk.3.attn_q.weight"
  TensorRole role = TensorRole::TokenEmbedding;
  int layer = -1;                  // block index, -1 outside the blocks
  std::vector<uint64_t> dims;      // ggml order: dims[0] is the row length (input features)
  std::string_view shape_meaning;  // "[n_embd, n_head_kv * head_dim]", for error messages
  bool operator==(const TensorSpec&) const = default;
};

// The tensors a model of this configuration has, in the order llama.cpp's converter writes them:
// token_embd, then each block, then output_norm and output (output.weight only when !tied_output,
// rope_freqs.weight only when has_rope_freqs, rope_factors_long/short.weight only when has_longrope_factors).
std::vector<TensorSpec> expected_tensors(const ModelConfig& config);

// The block index of a "blk.N.*" name, nullopt for names outside the blocks (or a malformed N).
std::optional<uint32_t> tensor_layer_index(std::string_view name);

// "[256, 512]" for error messages.
std::string format_dims(const std::vector<uint64_t>& dims);

}  // namespace infertune
