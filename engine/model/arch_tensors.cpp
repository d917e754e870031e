#include "engine/model/arch_tensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <charconv>
#include <span>

namespace infertune {
namespace {

// A dimension as a function of the config, so that the tables below stay plain data.
enum class Dim {
  None,
  Embd,
  Vocab,
  QDim,
  KDim,
  VDim,
  QkvDim,
  AttnOut,
  Ff,
  FfPair,
  RopeHalf,
  HeadDim,
  Head,
  Expert,
  FfExp,
  FfShexp
};

struct TensorTemplate {
  std::string_view name;  // without the "blk.N." prefix
  TensorRole role;
  Dim d0;                    // row length
  Dim d1;                    // Dim::None for 1-D tensors
  std::string_view meaning;  // the shape in words, for error messages
  Dim d2 = Dim::None;        // the expert index of a stack of expert matrices
};

// A block is its attention sub-layer's tensors, then its feed-forward's.
constexpr TensorTemplate kAttnNorm{"attn_norm.weight", TensorRole::AttnNorm, Dim::Embd, Dim::None, "[n_embd]"};
constexpr TensorTemplate kAttnQ{"attn_q.weight", TensorRole::AttnQ, Dim::Embd, Dim::QDim,
                                "[n_embd, n_head * head_dim]"};
constexpr TensorTemplate kAttnK{"attn_k.weight", TensorRole::AttnK, Dim::Embd, Dim::KDim,
                                "[n_embd, n_head_kv * head_dim]"};
constexpr TensorTemplate kAttnV{"attn_v.weight", TensorRole::AttnV, Dim::Embd, Dim::VDim,
                                "[n_embd, n_head_kv * head_dim_v]"};
constexpr TensorTemplate kAttnOutput{"attn_output.weight", TensorRole::AttnOutput, Dim::AttnOut, Dim::Embd,
                                     "[n_head * head_dim_v, n_embd]"};
constexpr TensorTemplate kAttnQNorm{"attn_q_norm.weight", TensorRole::AttnQNorm, Dim::HeadDim, Dim::None, "[head_dim]"};
constexpr TensorTemplate kAttnKNorm{"attn_k_norm.weight", TensorRole::AttnKNorm, Dim::HeadDim, Dim::None, "[head_dim]"};
constexpr TensorTemplate kFfnNorm{"ffn_norm.weight", TensorRole::FfnNorm, Dim::Embd, Dim::None, "[n_embd]"};

constexpr TensorTemplate kAttnQBias{"attn_q.bias", TensorRole::AttnQBias, Dim::QDim, Dim::None, "[n_head * head_dim]"};
constexpr TensorTemplate kAttnKBias{"attn_k.bias", TensorRole::AttnKBias, Dim::KDim, Dim::None,
                                    "[n_head_kv * head_dim]"};
constexpr TensorTemplate kAttnVBias{"attn_v.bias", TensorRole::AttnVBias, Dim::VDim, Dim::None,
                                    "[n_head_kv * head_dim_v]"};

constexpr std::array kLlamaAttention = {kAttnNorm, kAttnQ, kAttnK, kAttnV, kAttnOutput};

// qwen2: biases on Q, K and V (written right after the V weight).
constexpr std::array kQwen2Attention = {kAttnNorm,  kAttnQ,     kAttnK,     kAttnV,
                                        kAttnQBias, kAttnKBias, kAttnVBias, kAttnOutput};

// gpt-oss: biases on every projection, and a sink logit per query head.
constexpr std::array kGptOssAttention = {
    kAttnNorm,
    kAttnQ,
    kAttnQBias,
    kAttnK,
    kAttnKBias,
    kAttnV,
    kAttnVBias,
    kAttnOutput,
    TensorTemplate{"attn_output.bias", TensorRole::AttnOutputBias, Dim::Embd, Dim::None, "[n_embd]"},
    TensorTemplate{"attn_sinks.weight", TensorRole::AttnSinks, Dim::Head, Dim::None, "[n_head]"},
};

// phi3: q, k and v as one matrix (llama.cpp's converter fuses them so; the loader cuts it into three views).
constexpr std::array kPhi3Attention = {
    kAttnNorm,
    TensorTemplate{"attn_qkv.weight", TensorRole::AttnQkv, Dim::Embd, Dim::QkvDim,
                   "[n_embd, n_head * head_dim + 2 * n_head_kv * head_dim]"},
    kAttnOutput,
};

// qwen3, qwen3moe: an RMSNorm on each query and key head, before rope.
constexpr std::array kQkNormAttention = {kAttnNorm, kAttnQ, kAttnK, kAttnV, kAttnQNorm, kAttnKNorm, kAttnOutput};

// gemma3: the query and key norms, and another RMSNorm on the sub-layer's output (before the residual add).
constexpr std::array kGemma3Attention = {
    kAttnNorm,
    kAttnQ,
    kAttnK,
    kAttnV,
    kAttnQNorm,
    kAttnKNorm,
    kAttnOutput,
    TensorTemplate{"post_attention_norm.weight", TensorRole::AttnPostNorm, Dim::Embd, Dim::None, "[n_embd]"},
};

// gemma2: gemma3's attention without the per-head norms.
constexpr std::array kGemma2Attention = {
    kAttnNorm, kAttnQ, kAttnK, kAttnV, kAttnOutput, kGemma3Attention[7],
};

constexpr std::array kDenseFfn = {
    kFfnNorm,
    TensorTemplate{"ffn_gate.weight", TensorRole::FfnGate, Dim::Embd, Dim::Ff, "[n_embd, n_ff]"},
    TensorTemplate{"ffn_up.weight", TensorRole::FfnUp, Dim::Embd, Dim::Ff, "[n_embd, n_ff]"},
    TensorTemplate{"ffn_down.weight", TensorRole::FfnDown, Dim::Ff, Dim::Embd, "[n_ff, n_embd]"},
};

// phi3: the gate and up projections as one matrix named ffn_up, the gate's rows first.
constexpr std::array kPhi3Ffn = {
    kDenseFfn[0],
    TensorTemplate{"ffn_up.weight", TensorRole::FfnGateUp, Dim::Embd, Dim::FfPair, "[n_embd, 2 * n_ff]"},
    kDenseFfn[3],
};

// gemma3: the dense feed-forward with an RMSNorm on its output.
constexpr std::array kGemma3Ffn = {
    kDenseFfn[0],
    kDenseFfn[1],
    kDenseFfn[2],
    kDenseFfn[3],
    TensorTemplate{"post_ffw_norm.weight", TensorRole::FfnPostNorm, Dim::Embd, Dim::None, "[n_embd]"},
};

// A mixture of experts: the router, then each matrix of the SwiGLU stacked over the experts.
constexpr std::array kExpertFfn = {
    kFfnNorm,
    TensorTemplate{"ffn_gate_inp.weight", TensorRole::FfnGateInp, Dim::Embd, Dim::Expert, "[n_embd, n_expert]"},
    TensorTemplate{"ffn_gate_exps.weight", TensorRole::FfnGateExps, Dim::Embd, Dim::FfExp,
                   "[n_embd, n_ff_exp, n_expert]", Dim::Expert},
    TensorTemplate{"ffn_up_exps.weight", TensorRole::FfnUpExps, Dim::Embd, Dim::FfExp, "[n_embd, n_ff_exp, n_expert]",
                   Dim::Expert},
    TensorTemplate{"ffn_down_exps.weight", TensorRole::FfnDownExps, Dim::FfExp, Dim::Embd,
                   "[n_ff_exp, n_embd, n_expert]", Dim::Expert},
};

// gpt-oss: the feed-forward's norm is stored as post_attention_norm; the router and every expert matrix have biases.
constexpr std::array kBiasedExpertFfn = {
    TensorTemplate{"post_attention_norm.weight", TensorRole::FfnNorm, Dim::Embd, Dim::None, "[n_embd]"},
    kExpertFfn[1],
    TensorTemplate{"ffn_gate_inp.bias", TensorRole::FfnGateInpBias, Dim::Expert, Dim::None, "[n_expert]"},
    kExpertFfn[2],
    TensorTemplate{"ffn_gate_exps.bias", TensorRole::FfnGateExpsBias, Dim::FfExp, Dim::Expert, "[n_ff_exp, n_expert]"},
    kExpertFfn[3],
    TensorTemplate{"ffn_up_exps.bias", TensorRole::FfnUpExpsBias, Dim::FfExp, Dim::Expert, "[n_ff_exp, n_expert]"},
    kExpertFfn[4],
    TensorTemplate{"ffn_down_exps.bias", TensorRole::FfnDownExpsBias, Dim::Embd, Dim::Expert, "[n_embd, n_expert]"},
};

// Outside the blocks; the same for every architecture.
constexpr TensorTemplate kRopeFreqs{"rope_freqs.weight", TensorRole::RopeFreqs, Dim::RopeHalf, Dim::None,
                                    "[n_rot / 2]"};
constexpr TensorTemplate kRopeFactorsLong{"rope_factors_long.weight", TensorRole::RopeFactorsLong, Dim::RopeHalf,
                                          Dim::None, "[n_rot / 2]"};
constexpr TensorTemplate kRopeFactorsShort{"rope_factors_short.weight", TensorRole::RopeFactorsShort, Dim::RopeHalf,
                                           Dim::None, "[n_rot / 2]"};
constexpr TensorTemplate kTokenEmbd{"token_embd.weight", TensorRole::TokenEmbedding, Dim::Embd, Dim::Vocab,
                                    "[n_embd, n_vocab]"};
constexpr TensorTemplate kOutputNorm{"output_norm.weight", TensorRole::OutputNorm, Dim::Embd, Dim::None, "[n_embd]"};
constexpr TensorTemplate kOutput{"output.weight", TensorRole::Output, Dim::Embd, Dim::Vocab, "[n_embd, n_vocab]"};

// qwen2moe: the experts, and a shared expert every token goes through, scaled by a sigmoid gate of its input.
constexpr std::array kSharedExpertFfn = {
    kExpertFfn[0],
    kExpertFfn[1],
    kExpertFfn[2],
    kExpertFfn[3],
    kExpertFfn[4],
    TensorTemplate{"ffn_gate_inp_shexp.weight", TensorRole::FfnGateInpShexp, Dim::Embd, Dim::None, "[n_embd]"},
    TensorTemplate{"ffn_gate_shexp.weight", TensorRole::FfnGateShexp, Dim::Embd, Dim::FfShexp, "[n_embd, n_ff_shexp]"},
    TensorTemplate{"ffn_up_shexp.weight", TensorRole::FfnUpShexp, Dim::Embd, Dim::FfShexp, "[n_embd, n_ff_shexp]"},
    TensorTemplate{"ffn_down_shexp.weight", TensorRole::FfnDownShexp, Dim::FfShexp, Dim::Embd, "[n_ff_shexp, n_embd]"},
};

std::span<const TensorTemplate> attention_table(ModelArch arch) {
  switch (arch) {
    case ModelArch::Llama:
      return kLlamaAttention;
    case ModelArch::Qwen2:
    case ModelArch::Qwen2Moe:
      return kQwen2Attention;
    case ModelArch::Gemma3:
      return kGemma3Attention;
    case ModelArch::Qwen3:
    case ModelArch::Qwen3Moe:
      return kQkNormAttention;
    case ModelArch::GptOss:
      return kGptOssAttention;
    case ModelArch::Phi3:
      return kPhi3Attention;
    case ModelArch::Gemma2:
      return kGemma2Attention;
  }
  return kLlamaAttention;
}

std::span<const TensorTemplate> ffn_table(const ModelConfig& c) {
  if (c.arch == ModelArch::GptOss) return kBiasedExpertFfn;
  if (c.arch == ModelArch::Phi3) return kPhi3Ffn;
  if (c.has_shared_expert()) return kSharedExpertFfn;
  if (c.is_moe()) return kExpertFfn;
  return is_gemma_arch(c.arch) ? std::span<const TensorTemplate>(kGemma3Ffn) : kDenseFfn;
}

uint64_t dim_value(Dim dim, const ModelConfig& c) {
  switch (dim) {
    case Dim::None:
      return 0;
    case Dim::Embd:
      return c.n_embd;
    case Dim::Vocab:
      return c.n_vocab;
    case Dim::QDim:
      return c.q_dim();
    case Dim::KDim:
      return c.k_dim();
    case Dim::VDim:
      return c.v_dim();
    case Dim::QkvDim:
      return uint64_t{c.q_dim()} + c.k_dim() + c.v_dim();
    case Dim::AttnOut:
      return c.attn_out_dim();
    case Dim::Ff:
      return c.n_ff;
    case Dim::FfPair:
      return 2 * uint64_t{c.n_ff};
    case Dim::RopeHalf:
      return c.n_rot / 2;
    case Dim::HeadDim:
      return c.head_dim;
    case Dim::Head:
      return c.n_head;
    case Dim::Expert:
      return c.n_expert;
    case Dim::FfExp:
      return c.n_ff_exp;
    case Dim::FfShexp:
      return c.n_ff_shexp;
  }
  return 0;
}

TensorSpec instantiate(const TensorTemplate& t, const ModelConfig& c, int layer) {
  TensorSpec spec;
  spec.name = layer < 0 ? std::string(t.name) : fmt::format("blk.{}.{}", layer, t.name);
  spec.role = t.role;
  spec.layer = layer;
  spec.shape_meaning = t.meaning;
  spec.dims.push_back(dim_value(t.d0, c));
  if (t.d1 != Dim::None) spec.dims.push_back(dim_value(t.d1, c));
  if (t.d2 != Dim::None) spec.dims.push_back(dim_value(t.d2, c));
  return spec;
}

}  // namespace

std::string_view tensor_role_name(TensorRole role) {
  switch (role) {
    case TensorRole::TokenEmbedding:
      return "token_embd";
    case TensorRole::RopeFreqs:
      return "rope_freqs";
    case TensorRole::RopeFactorsLong:
      return "rope_factors_long";
    case TensorRole::RopeFactorsShort:
      return "rope_factors_short";
    case TensorRole::OutputNorm:
      return "output_norm";
    case TensorRole::Output:
      return "output";
    case TensorRole::AttnNorm:
      return "attn_norm";
    case TensorRole::AttnQ:
      return "attn_q";
    case TensorRole::AttnK:
      return "attn_k";
    case TensorRole::AttnV:
      return "attn_v";
    case TensorRole::AttnQkv:
      return "attn_qkv";
    case TensorRole::AttnQBias:
      return "attn_q.bias";
    case TensorRole::AttnKBias:
      return "attn_k.bias";
    case TensorRole::AttnVBias:
      return "attn_v.bias";
    case TensorRole::AttnQNorm:
      return "attn_q_norm";
    case TensorRole::AttnKNorm:
      return "attn_k_norm";
    case TensorRole::AttnOutput:
      return "attn_output";
    case TensorRole::AttnOutputBias:
      return "attn_output.bias";
    case TensorRole::AttnSinks:
      return "attn_sinks";
    case TensorRole::AttnPostNorm:
      return "post_attention_norm";
    case TensorRole::FfnNorm:
      return "ffn_norm";
    case TensorRole::FfnGate:
      return "ffn_gate";
    case TensorRole::FfnUp:
    case TensorRole::FfnGateUp:
      return "ffn_up";
    case TensorRole::FfnDown:
      return "ffn_down";
    case TensorRole::FfnPostNorm:
      return "post_ffw_norm";
    case TensorRole::FfnGateInp:
      return "ffn_gate_inp";
    case TensorRole::FfnGateExps:
      return "ffn_gate_exps";
    case TensorRole::FfnUpExps:
      return "ffn_up_exps";
    case TensorRole::FfnDownExps:
      return "ffn_down_exps";
    case TensorRole::FfnGateInpBias:
      return "ffn_gate_inp.bias";
    case TensorRole::FfnGateExpsBias:
      return "ffn_gate_exps.bias";
    case TensorRole::FfnUpExpsBias:
      return "ffn_up_exps.bias";
    case TensorRole::FfnDownExpsBias:
      return "ffn_down_exps.bias";
    case TensorRole::FfnGateInpShexp:
      return "ffn_gate_inp_shexp";
    case TensorRole::FfnGateShexp:
      return "ffn_gate_shexp";
    case TensorRole::FfnUpShexp:
      return "ffn_up_shexp";
    case TensorRole::FfnDownShexp:
      return "ffn_down_shexp";
  }
  return "?";
}

bool is_norm_role(TensorRole role) {
  return role == TensorRole::AttnNorm || role == TensorRole::FfnNorm || role == TensorRole::OutputNorm ||
         role == TensorRole::AttnQNorm || role == TensorRole::AttnKNorm || role == TensorRole::AttnPostNorm ||
         role == TensorRole::FfnPostNorm;
}

bool is_bias_role(TensorRole role) {
  switch (role) {
    case TensorRole::AttnQBias:
    case TensorRole::AttnKBias:
    case TensorRole::AttnVBias:
    case TensorRole::AttnOutputBias:
    case TensorRole::FfnGateInpBias:
    case TensorRole::FfnGateExpsBias:
    case TensorRole::FfnUpExpsBias:
    case TensorRole::FfnDownExpsBias:
      return true;
    default:
      return false;
  }
}

bool is_expert_role(TensorRole role) {
  return role == TensorRole::FfnGateExps || role == TensorRole::FfnUpExps || role == TensorRole::FfnDownExps;
}

std::vector<TensorSpec> expected_tensors(const ModelConfig& config) {
  const auto attention = attention_table(config.arch);
  const auto ffn = ffn_table(config);
  std::vector<TensorSpec> specs;
  specs.reserve(6 + (attention.size() + ffn.size()) * config.n_layers);
  if (config.has_rope_freqs) specs.push_back(instantiate(kRopeFreqs, config, -1));
  if (config.has_longrope_factors) {
    specs.push_back(instantiate(kRopeFactorsLong, config, -1));
    specs.push_back(instantiate(kRopeFactorsShort, config, -1));
  }
  specs.push_back(instantiate(kTokenEmbd, config, -1));
  for (uint32_t layer = 0; layer < config.n_layers; ++layer) {
    for (const auto table : {attention, ffn}) {
      for (const TensorTemplate& t : table) specs.push_back(instantiate(t, config, static_cast<int>(layer)));
    }
  }
  specs.push_back(instantiate(kOutputNorm, config, -1));
  if (!config.tied_output) specs.push_back(instantiate(kOutput, config, -1));
  return specs;
}

std::optional<uint32_t> tensor_layer_index(std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  const char* first = name.data() + kPrefix.size();
  const char* last = name.data() + name.size();
  uint32_t index = 0;
  const auto [end, ec] = std::from_chars(first, last, index);
  if (ec != std::errc() || end == first || end == last || *end != '.') return std::nullopt;
  return index;
}

std::string format_dims(const std::vector<uint64_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

}  // namespace infertune
