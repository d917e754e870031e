#include "engine/run/rope_flags.h"

#include <fmt/format.h>

#include <cmath>

namespace infertune {
namespace {

constexpr const char* kGroup = "RoPE";

// llama.cpp's "not given" values: 0 for some flags, negative numbers for others.
template <class T>
std::optional<T> unless_zero(const std::optional<T>& value) {
  return value && *value == 0 ? std::nullopt : value;
}
std::optional<float> unless_negative(const std::optional<float>& value) {
  return value && *value < 0 ? std::nullopt : value;
}

}  // namespace

void add_rope_flags(CLI::App& command, RopeFlags& flags) {
  command
      .add_option("--rope-scaling", flags.scaling,
                  "RoPE frequency scaling: none, linear or yarn (default: the model's rope.scaling.type)")
      ->check(CLI::IsMember({"none", "linear", "yarn"}))
      ->group(kGroup);
  auto* scale =
      command
          .add_option("--rope-scale", flags.scale,
                      "RoPE context scaling factor: expands the context by N (sets the frequency scale to 1/N)")
          ->group(kGroup);
  auto* freq_scale = command
                         .add_option("--rope-freq-scale", flags.freq_scale,
                                     "RoPE frequency scaling factor: expands the context by 1/N (default: the "
                                     "model's, 1 / rope.scaling.factor; 0 = the model's)")
                         ->group(kGroup);
  scale->excludes(freq_scale);
  command
      .add_option("--rope-freq-base", flags.freq_base,
                  "RoPE base frequency (default: the model's rope.freq_base; 0 = the model's)")
      ->group(kGroup);
  command
      .add_option("--yarn-orig-ctx", flags.yarn_orig_ctx,
                  "YaRN: original context size of the model (default: the model's "
                  "rope.scaling.original_context_length, else its training context; 0 = the model's)")
      ->group(kGroup);
  command
      .add_option("--yarn-ext-factor", flags.yarn_ext_factor,
                  "YaRN: extrapolation mix factor (default: 1 with yarn scaling, else 0; 0.0 = full interpolation; "
                  "negative = the default)")
      ->group(kGroup);
  command
      .add_option("--yarn-attn-factor", flags.yarn_attn_factor,
                  "YaRN: scale sqrt(t) or attention magnitude, times the model's rope.scaling.attn_factor "
                  "(default 1.0; negative = the default)")
      ->group(kGroup);
  command
      .add_option("--yarn-beta-slow", flags.yarn_beta_slow,
                  "YaRN: high correction dim or alpha (default 1.0; negative = the default)")
      ->group(kGroup);
  command
      .add_option("--yarn-beta-fast", flags.yarn_beta_fast,
                  "YaRN: low correction dim or beta (default 32.0; negative = the default)")
      ->group(kGroup);
}

Result<RopeOverrides> rope_overrides(const RopeFlags& flags) {
  RopeOverrides o;
  if (flags.scaling) {
    o.scaling = rope_scaling_from_name(*flags.scaling);
    if (!o.scaling) return fail("--rope-scaling '{}': must be none, linear or yarn", *flags.scaling);
  }
  if (flags.scale) {
    if (!(*flags.scale > 0) || !std::isfinite(*flags.scale)) {
      return fail("--rope-scale {}: must be positive and finite", *flags.scale);
    }
    o.freq_scale = 1.0f / *flags.scale;
  } else {
    o.freq_scale = unless_zero(flags.freq_scale);
  }
  o.freq_base = unless_zero(flags.freq_base);
  o.yarn_orig_ctx = unless_zero(flags.yarn_orig_ctx);
  o.yarn_ext_factor = unless_negative(flags.yarn_ext_factor);
  o.yarn_attn_factor = unless_negative(flags.yarn_attn_factor);
  o.yarn_beta_slow = unless_negative(flags.yarn_beta_slow);
  o.yarn_beta_fast = unless_negative(flags.yarn_beta_fast);
  if (Status s = validate(o); !s) return s.error();
  return o;
}

}  // namespace infertune
