#pragma once
// Model hyper-parameters, as stored in a GGUF file's `{arch}.*` and `tokenizer.ggml.*` keys, read and
// checked against each other and against the tensor table. Everything downstream (weights, KV cache,
// decode) may trust a ModelConfig that read_model_config returned: every shape it implies exists.
#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/gguf/gguf_file.h"
#include "kernels/result.h"

namespace infertune {

enum class ModelArch { Llama, Qwen2, Gemma3, Qwen3, Qwen3Moe, Qwen2Moe, GptOss, Phi3, Gemma2 };

// How rotary embeddings pair up the dimensions of a head: llama rotates interleaved pairs (2i, 2i+1),
// qwen2, qwen2moe, qwen3, qwen3moe, gemma2, gemma3, gpt-oss and phi3 ("NEOX" style) rotate the halves (i, i + n_rot/2).
enum class RopeStyle { Interleaved, Neox };

std::string_view model_arch_name(ModelArch arch);  // "llama", the GGUF general.architecture value
std::optional<ModelArch> model_arch_from_name(std::string_view name);
std::string supported_arch_names();  // "llama, qwen2, ..." (for error messages)
RopeStyle rope_style(ModelArch arch);
// An architecture whose feed-forward is always a mixture of experts (qwen3moe, qwen2moe, gpt-oss); llama may be
// either (Mixtral's files are llama with an expert count).
bool is_moe_arch(ModelArch arch);
// gemma2 and gemma3: the gemma block (a norm after each sub-layer, a GELU-gated feed-forward; engine/arch/gemma.cpp).
bool is_gemma_arch(ModelArch arch);

// Serialized as its name by nlohmann::json (found by ADL; no json include needed here).
template <class Json>
void to_json(Json& json, ModelArch arch) {
  json = std::string(model_arch_name(arch));
}

// Token ids stored as 0xFFFFFFFF (llama.cpp's -1) mean "none"; they are kept out of SpecialTokens.
inline constexpr uint32_t kNoTokenId = 0xFFFFFFFFu;

struct SpecialTokens {
  std::optional<uint32_t> bos;  // tokenizer.ggml.bos_token_id
  std::optional<uint32_t> eos;  // tokenizer.ggml.eos_token_id
  std::optional<uint32_t> unk;  // tokenizer.ggml.unknown_token_id
  std::optional<uint32_t> pad;  // tokenizer.ggml.padding_token_id
  std::optional<uint32_t> sep;  // tokenizer.ggml.seperator_token_id (sic, as llama.cpp spells it)
  bool operator==(const SpecialTokens&) const = default;
};

struct ModelConfig {
  ModelArch arch = ModelArch::Llama;
  std::string name;                        // general.name, may be empty
  uint32_t n_layers = 0;                   // {arch}.block_count
  uint32_t n_embd = 0;                     // {arch}.embedding_length
  uint32_t n_head = 0;                     // {arch}.attention.head_count
  uint32_t n_head_kv = 0;                  // {arch}.attention.head_count_kv (n_head when absent)
  uint32_t head_dim = 0;                   // {arch}.attention.key_length (n_embd / n_head when absent)
  uint32_t head_dim_v = 0;                 // {arch}.attention.value_length (head_dim when absent)
  uint32_t n_ff = 0;                       // {arch}.feed_forward_length
  uint32_t n_vocab = 0;                    // rows of token_embd.weight == tokenizer.ggml.tokens length
  uint32_t n_ctx_train = 0;                // {arch}.context_length
  uint32_t n_rot = 0;                      // {arch}.rope.dimension_count (head_dim when absent)
  float rope_freq_base = 10000;            // {arch}.rope.freq_base
  std::string rope_scaling_type = "none";  // {arch}.rope.scaling.type: none, linear, yarn (linear when
                                           // absent and the factor is not 1, as llama.cpp)
  float rope_scaling_factor = 1;           // {arch}.rope.scaling.factor (or the older rope.scale_linear)
  uint32_t rope_scaling_orig_ctx = 0;      // {arch}.rope.scaling.original_context_length, 0: absent
  float rope_scaling_attn_factor = 1;      // {arch}.rope.scaling.attn_factor (multiplies rope's cos and sin)
  float rms_eps = 1e-5f;                   // {arch}.attention.layer_norm_rms_epsilon
  // Sliding-window attention (gemma2, gemma3, gpt-oss): on the layers is_sliding_layer() names, a token sees only the
  // keys of the last `sliding_window` positions (its own included); gemma3's rope there uses rope_freq_base_swa
  // unscaled (gemma2's when the file sets {arch}.rope.freq_base_swa).
  uint32_t sliding_window = 0;         // {arch}.attention.sliding_window, 0: every layer sees its whole context
  uint32_t sliding_window_period = 0;  // every period-th layer is global, the others slide (gemma3: 6, gemma2 and
                                       // gpt-oss: 2)
  float rope_freq_base_swa = 0;        // the sliding layers' own rope base (gemma3: 10000), 0: the model's rope
  float attention_scale = 0;           // q.k scale, 0: 1 / sqrt(head_dim)
  float final_logit_softcap = 0;       // {arch}.final_logit_softcapping: logits = cap * tanh(logits / cap), 0: none
  float attn_logit_softcap = 0;  // {arch}.attn_logit_softcapping (gemma2): each attention score capped so, 0: none
  bool tied_output = false;      // no output.weight: the output projection reuses token_embd.weight
  // Mixture of experts (qwen3moe; llama with {arch}.expert_count, as Mixtral): each block's feed-forward is
  // n_expert SwiGLU experts, of which a router picks n_expert_used per token (engine/arch/expert_ffn.h).
  uint32_t n_expert = 0;       // {arch}.expert_count, 0: a dense feed-forward
  uint32_t n_expert_used = 0;  // {arch}.expert_used_count
  uint32_t n_ff_exp = 0;       // an expert's hidden size: {arch}.expert_feed_forward_length (qwen3moe), n_ff (llama)
  uint32_t n_ff_shexp = 0;     // the shared expert's hidden size (qwen2moe: every token also goes through it), 0: none
  // {arch}.pooling_type, in llama.cpp's numbering (0 none, 1 mean, 2 cls, 3 last, 4 rank): how an embedding
  // model pools its token states into one vector (engine/embedding/pooling.h); absent: 0.
  uint32_t pooling_type = 0;
  bool causal_attention = true;  // {arch}.attention.causal; false: bidirectional (embedding models; Context checks)
  bool has_rope_freqs = false;   // rope_freqs.weight present (llama-3 style frequency factors)
  // rope_factors_long.weight and rope_factors_short.weight present (phi3's LongRoPE): a context longer than the
  // original one (rope.scaling.original_context_length) divides the frequencies by the long factors, else by the
  // short ones (engine/context/rope_setup.h).
  bool has_longrope_factors = false;
  SpecialTokens tokens;
  std::optional<uint32_t> file_type;  // general.file_type (llama.cpp's LLAMA_FTYPE numbering)

  uint32_t n_gqa() const { return n_head_kv == 0 ? 0 : n_head / n_head_kv; }  // query heads per KV head
  uint32_t q_dim() const { return n_head * head_dim; }                        // rows of attn_q
  uint32_t k_dim() const { return n_head_kv * head_dim; }                     // rows of attn_k
  uint32_t v_dim() const { return n_head_kv * head_dim_v; }                   // rows of attn_v
  uint32_t attn_out_dim() const { return n_head * head_dim_v; }               // row length of attn_output
  bool is_moe() const { return n_expert != 0; }
  bool has_shared_expert() const { return n_ff_shexp != 0; }
  // The chosen experts' weights rescaled to sum to 1 (qwen2moe uses the softmax probabilities as they are).
  bool expert_weights_norm() const { return arch != ModelArch::Qwen2Moe; }
  uint32_t ffn_hidden() const { return is_moe() ? n_ff_exp : n_ff; }  // the width a feed-forward's gate/up write
  bool is_sliding_layer(uint32_t layer) const {
    return sliding_window != 0 && sliding_window_period != 0 &&
           layer % sliding_window_period != sliding_window_period - 1;
  }
  float attention_score_scale() const;  // attention_scale, or 1 / sqrt(head_dim) when it is 0
  bool operator==(const ModelConfig&) const = default;
};

// Sets what an architecture fixes rather than stores (gemma3: the sliding layers' period and rope base, the
// attention scale) from the fields read from the file; nothing for llama and qwen2.
void derive_arch_constants(ModelConfig& config);

// Checks the hyper-parameters among themselves (no tensors, no vocabulary): non-zero sizes, heads that
// divide, a head size that is whole, rope dimensions that fit a head, a positive finite epsilon.
// Errors name the key, e.g. "llama.attention.head_count_kv = 3 does not divide ... head_count = 8".
Status validate_hparams(const ModelConfig& config);

// Reads general.architecture, the `{arch}.*` hyper-parameters and the special token ids, and validates
// them against the tensor table (every tensor the config implies exists with the implied shape, no
// blk.N beyond block_count, no unknown tensor) and the tokenizer arrays (lengths == n_vocab, token ids
// in range). Errors start with the file's source name and name the key or tensor, expected vs found.
Result<ModelConfig> read_model_config(const GgufFile& file);

}  // namespace infertune

// fmt prints a ModelArch as its name: fmt::format("{}", ModelArch::Qwen2) == "qwen2".
template <>
struct fmt::formatter<infertune::ModelArch> : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(infertune::ModelArch arch, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(infertune::model_arch_name(arch), ctx);
  }
};
