#include "engine/model/arch_tensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <charconv>
#include <span>

namespace infertune {
namespace {

// A dimension as a function of the config, so that the tables below stay plain data.
enum class Dim { None, Embd, Vocab, QDim, KDim, VDim, AttnOut, Ff, RopeHalf, HeadDim };

struct TensorTemplate {
  std::string_view name;  // without the "blk.N." prefix
  TensorRole role;
  Dim d0;                    // row length
  Dim d1;                    // Dim::None for 1-D tensors
  std::string_view meaning;  // the shape in words, for error messages
};

constexpr std::array kLlamaBlock = {
    TensorTemplate{"attn_norm.weight", TensorRole::AttnNorm, Dim::Embd, Dim::None, "[n_embd]"},
    TensorTemplate{"attn_q.weight", TensorRole::AttnQ, Dim::Embd, Dim::QDim, "[n_embd, n_head * head_dim]"},
    TensorTemplate{"attn_k.weight", TensorRole::AttnK, Dim::Embd, Dim::KDim, "[n_embd, n_head_kv * head_dim]"},
    TensorTemplate{"attn_v.weight", TensorRole::AttnV, Dim::Embd, Dim::VDim, "[n_embd, n_head_kv * head_dim_v]"},
    TensorTemplate{"attn_output.weight", TensorRole::AttnOutput, Dim::AttnOut, Dim::Embd,
                   "[n_head * head_dim_v, n_embd]"},
    TensorTemplate{"ffn_norm.weight", TensorRole::FfnNorm, Dim::Embd, Dim::None, "[n_embd]"},
    TensorTemplate{"ffn_gate.weight", TensorRole::FfnGate, Dim::Embd, Dim::Ff, "[n_embd, n_ff]"},
    TensorTemplate{"ffn_up.weight", TensorRole::FfnUp, Dim::Embd, Dim::Ff, "[n_embd, n_ff]"},
    TensorTemplate{"ffn_down.weight", TensorRole::FfnDown, Dim::Ff, Dim::Embd, "[n_ff, n_embd]"},
};

// qwen2 = llama plus biases on Q, K and V (written right after the V weight).
constexpr std::array kQwen2Block = {
    TensorTemplate{"attn_norm.weight", TensorRole::AttnNorm, Dim::Embd, Dim::None, "[n_embd]"},
    TensorTemplate{"attn_q.weight", TensorRole::AttnQ, Dim::Embd, Dim::QDim, "[n_embd, n_head * head_dim]"},
    TensorTemplate{"attn_k.weight", TensorRole::AttnK, Dim::Embd, Dim::KDim, "[n_embd, n_head_kv * head_dim]"},
    TensorTemplate{"attn_v.weight", TensorRole::AttnV, Dim::Embd, Dim::VDim, "[n_embd, n_head_kv * head_dim_v]"},
    TensorTemplate{"attn_q.bias", TensorRole::AttnQBias, Dim::QDim, Dim::None, "[n_head * head_dim]"},
    TensorTemplate{"attn_k.bias", TensorRole::AttnKBias, Dim::KDim, Dim::None, "[n_head_kv * head_dim]"},
    TensorTemplate{"attn_v.bias", TensorRole::AttnVBias, Dim::VDim, Dim::None, "[n_head_kv * head_dim_v]"},
    TensorTemplate{"attn_output.weight", TensorRole::AttnOutput, Dim::AttnOut, Dim::Embd,
                   "[n_head * head_dim_v, n_embd]"},
    TensorTemplate{"ffn_norm.weight", TensorRole::FfnNorm, Dim::Embd, Dim::None, "[n_embd]"},
    TensorTemplate{"ffn_gate.weight", TensorRole::FfnGate, Dim::Embd, Dim::Ff, "[n_embd, n_ff]"},
    TensorTemplate{"ffn_up.weight", TensorRole::FfnUp, Dim::Embd, Dim::Ff, "[n_embd, n_ff]"},
    TensorTemplate{"ffn_down.weight", TensorRole::FfnDown, Dim::Ff, Dim::Embd, "[n_ff, n_embd]"},
};

// gemma3: the llama block with an RMSNorm on each query and key head (before rope) and another on the
// output of each sub-layer (before the residual add).
constexpr std::array kGemma3Block = {
    TensorTemplate{"attn_norm.weight", TensorRole::AttnNorm, Dim::Embd, Dim::None, "[n_embd]"},
    TensorTemplate{"attn_q.weight", TensorRole::AttnQ, Dim::Embd, Dim::QDim, "[n_embd, n_head * head_dim]"},
    TensorTemplate{"attn_k.weight", TensorRole::AttnK, Dim::Embd, Dim::KDim, "[n_embd, n_head_kv * head_dim]"},
    TensorTemplate{"attn_v.weight", TensorRole::AttnV, Dim::Embd, Dim::VDim, "[n_embd, n_head_kv * head_dim_v]"},
    TensorTemplate{"attn_q_norm.weight", TensorRole::AttnQNorm, Dim::HeadDim, Dim::None, "[head_dim]"},
    TensorTemplate{"attn_k_norm.weight", TensorRole::AttnKNorm, Dim::HeadDim, Dim::None, "[head_dim]"},
    TensorTemplate{"attn_output.weight", TensorRole::AttnOutput, Dim::AttnOut, Dim::Embd,
                   "[n_head * head_dim_v, n_embd]"},
    TensorTemplate{"post_attention_norm.weight", TensorRole::AttnPostNorm, Dim::Embd, Dim::None, "[n_embd]"},
    TensorTemplate{"ffn_norm.weight", TensorRole::FfnNorm, Dim::Embd, Dim::None, "[n_embd]"},
    TensorTemplate{"ffn_gate.weight", TensorRole::FfnGate, Dim::Embd, Dim::Ff, "[n_embd, n_ff]"},
    TensorTemplate{"ffn_up.weight", TensorRole::FfnUp, Dim::Embd, Dim::Ff, "[n_embd, n_ff]"},
    TensorTemplate{"ffn_down.weight", TensorRole::FfnDown, Dim::Ff, Dim::Embd, "[n_ff, n_embd]"},
    TensorTemplate{"post_ffw_norm.weight", TensorRole::FfnPostNorm, Dim::Embd, Dim::None, "[n_embd]"},
};

// qwen3: the llama block with an RMSNorm on each query and key head, before rope (no biases).
constexpr std::array kQwen3Block = {
    TensorTemplate{"attn_norm.weight", TensorRole::AttnNorm, Dim::Embd, Dim::None, "[n_embd]"},
    TensorTemplate{"attn_q.weight", TensorRole::AttnQ, Dim::Embd, Dim::QDim, "[n_embd, n_head * head_dim]"},
    TensorTemplate{"attn_k.weight", TensorRole::AttnK, Dim::Embd, Dim::KDim, "[n_embd, n_head_kv * head_dim]"},
    TensorTemplate{"attn_v.weight", TensorRole::AttnV, Dim::Embd, Dim::VDim, "[n_embd, n_head_kv * head_dim_v]"},
    TensorTemplate{"attn_q_norm.weight", TensorRole::AttnQNorm, Dim::HeadDim, Dim::None, "[head_dim]"},
    TensorTemplate{"attn_k_norm.weight", TensorRole::AttnKNorm, Dim::HeadDim, Dim::None, "[head_dim]"},
    TensorTemplate{"attn_output.weight", TensorRole::AttnOutput, Dim::AttnOut, Dim::Embd,
                   "[n_head * head_dim_v, n_embd]"},
    TensorTemplate{"ffn_norm.weight", TensorRole::FfnNorm, Dim::Embd, Dim::None, "[n_embd]"},
    TensorTemplate{"ffn_gate.weight", TensorRole::FfnGate, Dim::Embd, Dim::Ff, "[n_embd, n_ff]"},
    TensorTemplate{"ffn_up.weight", TensorRole::FfnUp, Dim::Embd, Dim::Ff, "[n_embd, n_ff]"},
    TensorTemplate{"ffn_down.weight", TensorRole::FfnDown, Dim::Ff, Dim::Embd, "[n_ff, n_embd]"},
};

// Outside the blocks; the same for every architecture.
constexpr TensorTemplate kRopeFreqs{"rope_freqs.weight", TensorRole::RopeFreqs, Dim::RopeHalf, Dim::None,
                                    "[n_rot / 2]"};
constexpr TensorTemplate kTokenEmbd{"token_embd.weight", TensorRole::TokenEmbedding, Dim::Embd, Dim::Vocab,
                                    "[n_embd, n_vocab]"};
constexpr TensorTemplate kOutputNorm{"output_norm.weight", TensorRole::OutputNorm, Dim::Embd, Dim::None, "[n_embd]"};
constexpr TensorTemplate kOutput{"output.weight", TensorRole::Output, Dim::Embd, Dim::Vocab, "[n_embd, n_vocab]"};

std::span<const TensorTemplate> block_table(ModelArch arch) {
  switch (arch) {
    case ModelArch::Llama:
      return kLlamaBlock;
    case ModelArch::Qwen2:
      return kQwen2Block;
    case ModelArch::Gemma3:
      return kGemma3Block;
    case ModelArch::Qwen3:
      return kQwen3Block;
  }
  return kLlamaBlock;
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
    case Dim::AttnOut:
      return c.attn_out_dim();
    case Dim::Ff:
      return c.n_ff;
    case Dim::RopeHalf:
      return c.n_rot / 2;
    case Dim::HeadDim:
      return c.head_dim;
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
  return spec;
}

}  // namespace

std::string_view tensor_role_name(TensorRole role) {
  switch (role) {
    case TensorRole::TokenEmbedding:
      return "token_embd";
    case TensorRole::RopeFreqs:
      return "rope_freqs";
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
    case TensorRole::AttnPostNorm:
      return "post_attention_norm";
    case TensorRole::FfnNorm:
      return "ffn_norm";
    case TensorRole::FfnGate:
      return "ffn_gate";
    case TensorRole::FfnUp:
      return "ffn_up";
    case TensorRole::FfnDown:
      return "ffn_down";
    case TensorRole::FfnPostNorm:
      return "post_ffw_norm";
  }
  return "?";
}

bool is_norm_role(TensorRole role) {
  return role == TensorRole::AttnNorm || role == TensorRole::FfnNorm || role == TensorRole::OutputNorm ||
         role == TensorRole::AttnQNorm || role == TensorRole::AttnKNorm || role == TensorRole::AttnPostNorm ||
         role == TensorRole::FfnPostNorm;
}

bool is_bias_role(TensorRole role) {
  return role == TensorRole::AttnQBias || role == TensorRole::AttnKBias || role == TensorRole::AttnVBias;
}

std::vector<TensorSpec> expected_tensors(const ModelConfig& config) {
  const auto block = block_table(config.arch);
  std::vector<TensorSpec> specs;
  specs.reserve(3 + block.size() * config.n_layers + 1);
  if (config.has_rope_freqs) specs.push_back(instantiate(kRopeFreqs, config, -1));
  specs.push_back(instantiate(kTokenEmbd, config, -1));
  for (uint32_t layer = 0; layer < config.n_layers; ++layer) {
    for (const TensorTemplate& t : block) specs.push_back(instantiate(t, config, static_cast<int>(layer)));
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
