#include "engine/synth/quant_mix.h"

#include <array>
#include <cctype>

namespace infertune {
namespace {

// LLAMA_FTYPE_* numbers (llama.h) of the file types below.
enum Ftype : uint32_t {
  kAllF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ8_0 = 7,
  kQ5_0 = 8,
  kQ5_1 = 9,
  kQ2_K = 10,
  kQ3_K_S = 11,
  kQ3_K_M = 12,
  kQ3_K_L = 13,
  kQ4_K_S = 14,
  kQ4_K_M = 15,
  kQ5_K_S = 16,
  kQ5_K_M = 17,
  kQ6_K = 18,
  kIQ4_NL = 25,
  kIQ4_XS = 30,
  kBF16 = 32,
  kMXFP4_MOE = 38,
};

constexpr std::array kFileTypes = {
    FileType{"f32", kAllF32, GgmlType::F32, true, "all f32"},
    FileType{"f16", kF16, GgmlType::F16, true, "f16 weights, f32 norms"},
    FileType{"bf16", kBF16, GgmlType::BF16, true, "bf16 weights, f32 norms"},
    FileType{"q8_0", kQ8_0, GgmlType::Q8_0, true, "8.5 bpw"},
    FileType{"q4_0", kQ4_0, GgmlType::Q4_0, true, "4.5 bpw, output q6_K"},
    FileType{"q4_1", kQ4_1, GgmlType::Q4_1, true, "5.0 bpw, output q6_K"},
    FileType{"q5_0", kQ5_0, GgmlType::Q5_0, true, "5.5 bpw, output q6_K"},
    FileType{"q5_1", kQ5_1, GgmlType::Q5_1, true, "6.0 bpw, output q6_K"},
    FileType{"iq4_nl", kIQ4_NL, GgmlType::IQ4_NL, true, "4.5 bpw non-linear, output q6_K"},
    FileType{"iq4_xs", kIQ4_XS, GgmlType::IQ4_XS, true, "4.25 bpw non-linear, output q6_K"},
    FileType{"mxfp4_moe", kMXFP4_MOE, GgmlType::MXFP4, true, "experts mxfp4 (4.25 bpw), other weights q8_0"},
    FileType{"q2_k", kQ2_K, GgmlType::Q2_K, true, "mix: q2_K, attn_v/ffn_down/attn_output q3_K+"},
    FileType{"q3_k_s", kQ3_K_S, GgmlType::Q3_K, true, "mix: q3_K"},
    FileType{"q3_k_m", kQ3_K_M, GgmlType::Q3_K, true, "mix: q3_K, attn_v q5_K/q4_K, ffn_down/attn_output q4_K"},
    FileType{"q3_k_l", kQ3_K_L, GgmlType::Q3_K, true, "mix: q3_K, attn_v/ffn_down/attn_output q5_K"},
    FileType{"q4_k_s", kQ4_K_S, GgmlType::Q4_K, true, "mix: q4_K, first layers' attn_v/ffn_down q5_K"},
    FileType{"q4_k_m", kQ4_K_M, GgmlType::Q4_K, true, "mix: q4_K, half of attn_v/ffn_down q6_K"},
    FileType{"q5_k_s", kQ5_K_S, GgmlType::Q5_K, true, "mix: q5_K"},
    FileType{"q5_k_m", kQ5_K_M, GgmlType::Q5_K, true, "mix: q5_K, half of attn_v/ffn_down q6_K"},
    FileType{"q6_k", kQ6_K, GgmlType::Q6_K, true, "q6_K"},
    // Plain K types: every weight in that type (written with the file type a loader would guess).
    FileType{"q3_K", kQ3_K_M, GgmlType::Q3_K, false, "every weight q3_K"},
    FileType{"q4_K", kQ4_K_M, GgmlType::Q4_K, false, "every weight q4_K"},
    FileType{"q5_K", kQ5_K_M, GgmlType::Q5_K, false, "every weight q5_K"},
};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

bool is_quantized(GgmlType type) { return ggml_type_traits(type).quantized; }

bool fits(GgmlType type, uint64_t row_length) { return row_length % ggml_type_traits(type).block_elements == 0; }

// llama.cpp's LLM_TYPE_70B, the one model size its rules single out for dense llama / qwen2 models.
bool is_70b(const ModelConfig& c) {
  return c.n_layers == 80 && (c.arch == ModelArch::Qwen2 || c.n_head != c.n_head_kv);
}

GgmlType output_type(GgmlType default_type, uint64_t row_length) {
  if (!fits(default_type, row_length)) return GgmlType::Q8_0;
  return default_type == GgmlType::Q8_0 ? GgmlType::Q8_0 : GgmlType::Q6_K;
}

GgmlType attn_v_type(uint32_t ftype, GgmlType type, int layer, const ModelConfig& c) {
  const int n = static_cast<int>(c.n_layers);
  if (ftype == kQ2_K) {
    type = c.n_gqa() >= 4 ? GgmlType::Q4_K : GgmlType::Q3_K;
  } else if (ftype == kQ3_K_M) {
    type = layer < 2 ? GgmlType::Q5_K : GgmlType::Q4_K;
  } else if (ftype == kQ3_K_L) {
    type = GgmlType::Q5_K;
  } else if ((ftype == kIQ4_NL || ftype == kIQ4_XS) && c.n_gqa() >= 4) {
    type = GgmlType::Q5_K;
  } else if ((ftype == kQ4_K_M || ftype == kQ5_K_M) && use_more_bits(layer, n)) {
    type = GgmlType::Q6_K;
  } else if (ftype == kQ4_K_S && layer < 4) {
    type = GgmlType::Q5_K;
  }
  // A 70B model shares each V projection among 8 query heads, so more bits there cost little.
  if (is_70b(c) && (type == GgmlType::Q3_K || type == GgmlType::Q4_K)) type = GgmlType::Q5_K;
  return type;
}

GgmlType ffn_down_type(uint32_t ftype, GgmlType type, int layer, const ModelConfig& c, bool has_importance) {
  const int n = static_cast<int>(c.n_layers);
  switch (ftype) {
    case kQ2_K:
      return GgmlType::Q3_K;
    case kQ3_K_M:
      return layer < n / 16 ? GgmlType::Q5_K : GgmlType::Q4_K;
    case kQ3_K_L:
      return GgmlType::Q5_K;
    case kQ4_K_M:
    case kQ5_K_M:
      return use_more_bits(layer, n) ? GgmlType::Q6_K : type;
    case kIQ4_NL:
    case kIQ4_XS:
      return layer < n / 8 && !has_importance ? GgmlType::Q5_K : type;
    case kQ4_K_S:
      return layer < n / 8 ? GgmlType::Q5_K : type;
    case kQ4_0:
    case kQ5_0:
      // Even with a matrix the first ffn_down layers can go badly in the offset-free formats.
      if (!has_importance || layer >= n / 8) return type;
      return ftype == kQ4_0 ? GgmlType::Q4_1 : GgmlType::Q5_1;
    default:
      return type;
  }
}

// Mixtral (8 experts) gets more bits in attention, whose weights are a small part of such a model.
constexpr uint32_t kMixtralExperts = 8;

GgmlType attn_output_type(uint32_t ftype, GgmlType type, const ModelConfig& c) {
  if (c.n_expert == kMixtralExperts) {
    switch (ftype) {
      case kQ2_K:
      case kQ3_K_S:
      case kQ3_K_M:
      case kIQ4_NL:
      case kQ4_K_S:
      case kQ4_K_M:
      case kIQ4_XS:
        return GgmlType::Q5_K;
      default:
        return type;
    }
  }
  switch (ftype) {
    case kQ2_K:
      return GgmlType::Q3_K;
    case kQ3_K_M:
      return GgmlType::Q4_K;
    case kQ3_K_L:
      return GgmlType::Q5_K;
    default:
      return type;
  }
}

// gpt-oss's published form: the expert stacks in MXFP4, everything else (the output and token_embd included)
// in Q8_0, none of the per-role rules below. llama.cpp tells the stacks by shape (a third dimension over 1),
// so any 3-D weight would go to MXFP4.
GgmlType mxfp4_moe_type(const TensorSpec& t) {
  const bool stacked = t.dims.size() >= 3 && t.dims[2] > 1;
  return stacked ? GgmlType::MXFP4 : GgmlType::Q8_0;
}

GgmlType mixed_type(const FileType& ft, const TensorSpec& t, const ModelConfig& c, bool has_importance) {
  if (ft.llama_ftype == kMXFP4_MOE) return mxfp4_moe_type(t);
  const GgmlType type = ft.default_type;
  if (t.role == TensorRole::Output || (c.tied_output && t.role == TensorRole::TokenEmbedding)) {
    return output_type(type, t.dims[0]);
  }
  switch (t.role) {
    case TensorRole::AttnV:
    case TensorRole::AttnQkv:  // llama.cpp gives a fused q/k/v the rules of attn_v
      return c.n_expert == kMixtralExperts ? GgmlType::Q8_0 : attn_v_type(ft.llama_ftype, type, t.layer, c);
    case TensorRole::AttnK:
      return c.n_expert == kMixtralExperts ? GgmlType::Q8_0 : type;
    case TensorRole::FfnDown:
    case TensorRole::FfnDownExps:
    case TensorRole::FfnDownShexp:
      return ffn_down_type(ft.llama_ftype, type, t.layer, c, has_importance);
    case TensorRole::AttnOutput:
      return attn_output_type(ft.llama_ftype, type, c);
    default:
      return type;
  }
}

}  // namespace

std::span<const FileType> file_types() { return kFileTypes; }

std::optional<FileType> file_type_from_name(std::string_view name) {
  for (const FileType& ft : kFileTypes) {
    if (iequals(ft.name, name)) return ft;
  }
  return std::nullopt;
}

std::string file_type_names() {
  std::string names;
  for (const FileType& ft : kFileTypes) names += (names.empty() ? "" : ", ") + std::string(ft.name);
  return names;
}

bool use_more_bits(int layer, int n_layers) {
  return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

GgmlType fallback_for_row_length(GgmlType type, uint64_t row_length) {
  if (fits(type, row_length)) return type;
  GgmlType replacement = GgmlType::F16;
  switch (type) {
    case GgmlType::IQ4_XS:
      replacement = GgmlType::IQ4_NL;
      break;
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
      replacement = GgmlType::Q4_0;
      break;
    case GgmlType::Q4_K:
      replacement = GgmlType::Q5_0;
      break;
    case GgmlType::Q5_K:
      replacement = GgmlType::Q5_1;
      break;
    case GgmlType::Q6_K:
      replacement = GgmlType::Q8_0;
      break;
    default:
      // llama.cpp refuses here; f16 stores any row, so a synthetic model still gets written.
      break;
  }
  return fits(replacement, row_length) ? replacement : GgmlType::F16;
}

GgmlType tensor_type_for(const FileType& file_type, const TensorSpec& tensor, const ModelConfig& config,
                         QuantMixOptions options) {
  // The router stays f32, as llama.cpp keeps it: its logits pick the experts, and it is small.
  const bool quantizable = tensor.dims.size() >= 2 && !is_norm_role(tensor.role) && !is_bias_role(tensor.role) &&
                           tensor.role != TensorRole::FfnGateInp;
  if (!quantizable) return GgmlType::F32;
  if (!is_quantized(file_type.default_type)) return file_type.default_type;
  const bool apply_mix = file_type.mixed && !options.pure;
  const GgmlType type =
      apply_mix ? mixed_type(file_type, tensor, config, options.has_importance) : file_type.default_type;
  return fallback_for_row_length(type, tensor.dims[0]);
}

}  // namespace infertune
