#include "engine/context/rope_setup.h"

#include <cmath>

namespace infertune {
namespace {

constexpr float kDefaultBetaFast = 32.0f;  // llama.cpp's --yarn-beta-fast default (the YaRN paper's beta)
constexpr float kDefaultBetaSlow = 1.0f;   // llama.cpp's --yarn-beta-slow default (the YaRN paper's alpha)

struct ScalingName {
  RopeScaling scaling;
  std::string_view name;
};
constexpr ScalingName kScalingNames[] = {
    {RopeScaling::None, "none"}, {RopeScaling::Linear, "linear"}, {RopeScaling::Yarn, "yarn"}};

Status check_positive(const char* flag, const std::optional<float>& value) {
  if (value && !(*value > 0 && std::isfinite(*value))) return fail("{} {}: must be positive and finite", flag, *value);
  return {};
}

}  // namespace

std::optional<RopeScaling> rope_scaling_from_name(std::string_view name) {
  for (const ScalingName& entry : kScalingNames) {
    if (entry.name == name) return entry.scaling;
  }
  return std::nullopt;
}

std::string_view rope_scaling_name(RopeScaling scaling) {
  for (const ScalingName& entry : kScalingNames) {
    if (entry.scaling == scaling) return entry.name;
  }
  return "?";
}

Status validate(const RopeOverrides& o) {
  const std::pair<const char*, const std::optional<float>*> positive[] = {
      {"--rope-freq-base", &o.freq_base},          {"--rope-freq-scale", &o.freq_scale},
      {"--yarn-attn-factor", &o.yarn_attn_factor}, {"--yarn-beta-slow", &o.yarn_beta_slow},
      {"--yarn-beta-fast", &o.yarn_beta_fast},
  };
  for (const auto& [flag, value] : positive) {
    if (Status s = check_positive(flag, *value); !s) return s;
  }
  if (o.yarn_ext_factor && !(*o.yarn_ext_factor >= 0 && std::isfinite(*o.yarn_ext_factor))) {
    return fail("--yarn-ext-factor {}: must be at least 0 and finite", *o.yarn_ext_factor);
  }
  if (o.yarn_orig_ctx && *o.yarn_orig_ctx == 0) return fail("--yarn-orig-ctx 0: must be at least 1");
  return {};
}

std::span<const float> rope_freq_factors(const ModelConfig& c, const ModelWeights& weights, uint32_t n_ctx) {
  if (!weights.rope_freqs.empty()) return weights.rope_freqs;
  if (!c.has_longrope_factors) return {};
  constexpr uint64_t kLlamaCppContextPad = 256;
  const uint64_t padded = (uint64_t{n_ctx} + kLlamaCppContextPad - 1) / kLlamaCppContextPad * kLlamaCppContextPad;
  const uint32_t original = c.rope_scaling_orig_ctx != 0 ? c.rope_scaling_orig_ctx : c.n_ctx_train;
  return padded > original ? weights.rope_factors_long : weights.rope_factors_short;
}

Result<RopeParams> resolve_rope(const ModelConfig& c, std::span<const float> freq_factors, const RopeOverrides& o) {
  if (Status s = validate(o); !s) return s.error();
  const auto file_scaling = rope_scaling_from_name(c.rope_scaling_type);
  if (!file_scaling && !o.scaling) {
    return fail("{}.rope.scaling.type = '{}' is not supported (none, linear, yarn)", c.arch, c.rope_scaling_type);
  }
  const RopeScaling scaling = o.scaling.value_or(file_scaling.value_or(RopeScaling::None));

  RopeParams rope;
  rope.n_rot = c.n_rot;
  rope.layout = rope_style(c.arch) == RopeStyle::Neox ? RopeLayout::Neox : RopeLayout::Interleaved;
  rope.freq_factors = freq_factors;
  rope.freq_base = o.freq_base.value_or(c.rope_freq_base);
  // As llama.cpp: the file's factor applies to linear and yarn alike, and "none" never scales.
  rope.freq_scale = scaling == RopeScaling::None ? 1.0f : o.freq_scale.value_or(1.0f / c.rope_scaling_factor);
  rope.ext_factor = o.yarn_ext_factor.value_or(scaling == RopeScaling::Yarn ? 1.0f : 0.0f);
  rope.attn_factor = o.yarn_attn_factor.value_or(1.0f) * c.rope_scaling_attn_factor;
  rope.n_ctx_orig = o.yarn_orig_ctx.value_or(c.rope_scaling_orig_ctx != 0 ? c.rope_scaling_orig_ctx : c.n_ctx_train);
  rope.beta_fast = o.yarn_beta_fast.value_or(kDefaultBetaFast);
  rope.beta_slow = o.yarn_beta_slow.value_or(kDefaultBetaSlow);
  return rope;
}

std::vector<RopeParams> layer_ropes(const ModelConfig& c, const RopeParams& model_rope) {
  if (c.sliding_window == 0 || c.rope_freq_base_swa == 0) return {};
  std::vector<RopeParams> ropes(c.n_layers, model_rope);
  for (uint32_t il = 0; il < c.n_layers; ++il) {
    if (!c.is_sliding_layer(il)) continue;
    ropes[il].freq_base = c.rope_freq_base_swa;
    ropes[il].freq_scale = 1.0f;
  }
  return ropes;
}

}  // namespace infertune
