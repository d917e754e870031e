#include "kernels/ops/rope.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>

#include "kernels/ops/ops_kernels.h"

namespace infertune {
namespace {

// The (fractional) pair index whose wavelength 2 pi / theta fits `rotations` times into n_ctx_orig.
float yarn_corr_dim(uint32_t n_rot, uint32_t n_ctx_orig, float rotations, float base) {
  const float two_pi = 2.0f * std::numbers::pi_v<float>;
  return static_cast<float>(n_rot) * std::log(static_cast<float>(n_ctx_orig) / (rotations * two_pi)) /
         (2.0f * std::log(base));
}

// 1 for the pairs before `low` (extrapolated), 0 from `high` on (interpolated), linear in between.
float yarn_ramp(RopeCorrDims dims, size_t pair) {
  const float y = (static_cast<float>(pair) - dims.low) / std::max(0.001f, dims.high - dims.low);
  return 1.0f - std::min(1.0f, std::max(0.0f, y));
}

}  // namespace

RopeCorrDims rope_yarn_corr_dims(const RopeParams& p) {
  const float start = std::floor(yarn_corr_dim(p.n_rot, p.n_ctx_orig, p.beta_fast, p.freq_base));
  const float end = std::ceil(yarn_corr_dim(p.n_rot, p.n_ctx_orig, p.beta_slow, p.freq_base));
  return {std::max(0.0f, start), std::min(static_cast<float>(p.n_rot) - 1.0f, end)};
}

float rope_mscale(const RopeParams& p) {
  if (p.ext_factor == 0.0f) return p.attn_factor;
  return p.attn_factor * (1.0f + 0.1f * std::log(1.0f / p.freq_scale));
}

void rope_angles(const RopeParams& params, int64_t pos, std::span<float> cos, std::span<float> sin) {
  const size_t n_pairs = params.n_rot / 2;
  const float step = std::pow(params.freq_base, -2.0f / static_cast<float>(params.n_rot));
  const bool yarn = params.ext_factor != 0.0f;
  const RopeCorrDims dims = yarn ? rope_yarn_corr_dims(params) : RopeCorrDims{};
  const float mscale = rope_mscale(params);
  float theta = static_cast<float>(pos);
  for (size_t i = 0; i < n_pairs; ++i) {
    const float factor = params.freq_factors.empty() ? 1.0f : params.freq_factors[i];
    const float extrapolated = theta / factor;
    const float interpolated = params.freq_scale * extrapolated;
    float angle = interpolated;
    if (yarn) {
      const float mix = yarn_ramp(dims, i) * params.ext_factor;
      angle = interpolated * (1.0f - mix) + extrapolated * mix;
    }
    // With ext_factor 0 and attn_factor 1 (plain and linear rope) mscale is exactly 1: cos and sin stay
    // bit-for-bit what they were before YaRN existed.
    cos[i] = std::cos(angle) * mscale;
    sin[i] = std::sin(angle) * mscale;
    theta *= step;
  }
}

void rope_rotate(const RopeParams& params, std::span<const float> cos, std::span<const float> sin,
                 std::span<float> head) {
  // The ops variant chosen at start-up (kernels/ops/ops_kernels.h; reference loop in scalar_ops.cpp).
  ops_kernels().rope_rotate(head.data(), cos.data(), sin.data(), params.n_rot / 2, params.layout == RopeLayout::Neox);
}

}  // namespace infertune
