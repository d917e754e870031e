#pragma once
// The rope a context runs with: the model's `{arch}.rope.*` metadata, with the user's overrides (the
// --rope-* / --yarn-* flags of `run`) on top, resolved the way llama.cpp resolves its context parameters:
//   scaling     = --rope-scaling, else rope.scaling.type (none / linear / yarn)
//   freq_base   = --rope-freq-base, else rope.freq_base
//   freq_scale  = --rope-freq-scale (or 1 / --rope-scale), else 1 / rope.scaling.factor; always 1 for none
//   ext_factor  = --yarn-ext-factor, else 1 for yarn and 0 otherwise
//   attn_factor = (--yarn-attn-factor, else 1) * rope.scaling.attn_factor
//   n_ctx_orig  = --yarn-orig-ctx, else rope.scaling.original_context_length, else context_length
//   beta_fast   = --yarn-beta-fast, else 32;  beta_slow = --yarn-beta-slow, else 1
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/model.h"
#include "engine/model/model_config.h"
#include "kernels/ops/rope.h"
#include "kernels/result.h"

namespace infertune {

enum class RopeScaling { None, Linear, Yarn };

std::optional<RopeScaling> rope_scaling_from_name(std::string_view name);  // "none", "linear", "yarn"
std::string_view rope_scaling_name(RopeScaling scaling);

// Each set field replaces what the model file says. Unset: the file's value (or llama.cpp's default).
struct RopeOverrides {
  std::optional<RopeScaling> scaling{};     // --rope-scaling
  std::optional<float> freq_base{};         // --rope-freq-base
  std::optional<float> freq_scale{};        // --rope-freq-scale, or 1 / --rope-scale
  std::optional<uint32_t> yarn_orig_ctx{};  // --yarn-orig-ctx
  std::optional<float> yarn_ext_factor{};   // --yarn-ext-factor
  std::optional<float> yarn_attn_factor{};  // --yarn-attn-factor
  std::optional<float> yarn_beta_slow{};    // --yarn-beta-slow
  std::optional<float> yarn_beta_fast{};    // --yarn-beta-fast
};

// Checks the set fields (positive and finite; ext_factor may be 0); errors name the flag, e.g.
// "--rope-freq-base -1: must be positive and finite".
Status validate(const RopeOverrides& overrides);

// The frequency divisors a context of n_ctx cells rotates with: rope_freqs.weight when the model has it (llama-3);
// phi3's LongRoPE long factors when the context is longer than the one the model was trained with first
// (rope.scaling.original_context_length, else context_length), the short ones otherwise; none without either. The
// context is rounded up to a multiple of 256 cells for the comparison, as llama.cpp rounds its own, so that the two
// engines pick the same factors for the same -c.
std::span<const float> rope_freq_factors(const ModelConfig& config, const ModelWeights& weights, uint32_t n_ctx);

// The rope of `config` under `overrides` (validated here). freq_factors: [n_rot / 2] or empty, and must
// outlive the result. Errors on invalid overrides and on a rope scaling type other than none/linear/yarn.
Result<RopeParams> resolve_rope(const ModelConfig& config, std::span<const float> freq_factors,
                                const RopeOverrides& overrides = {});

// The rope of every layer when they differ (gemma3's sliding layers: `model_rope` with the sliding base and no
// scaling, as llama.cpp rotates them; the global layers keep model_rope, overrides included); empty when
// every layer uses model_rope.
std::vector<RopeParams> layer_ropes(const ModelConfig& config, const RopeParams& model_rope);

}  // namespace infertune
