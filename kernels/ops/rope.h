#pragma once
// Rotary position embeddings (RoPE). Pair i of a head (i < n_rot / 2) is rotated by the angle
//   theta_extrap(i) = pos * freq_base^(-2i / n_rot) / freq_factors[i]
//   theta_interp(i) = freq_scale * theta_extrap(i)
//   angle(i)        = theta_interp(i)                                   (ext_factor == 0: none, linear)
//                   = theta_interp * (1 - m(i)) + theta_extrap * m(i)   (YaRN, m(i) = ramp(i) * ext_factor)
// and cos, sin are multiplied by the magnitude
//   mscale = attn_factor                                   (ext_factor == 0)
//          = attn_factor * (1 + 0.1 * ln(1 / freq_scale))  (YaRN: the paper's sqrt(1/t), on both q and k)
// YaRN's ramp (ggml's, and the paper's reference code's): the pairs whose wavelength fits more than
// beta_fast times into n_ctx_orig keep their original angle (ramp 1, extrapolation), those fitting fewer
// than beta_slow times are interpolated (ramp 0), linearly in the pair index in between; see
// rope_yarn_corr_dims. The pairs are (2i, 2i + 1) in the interleaved layout (llama) and (i, i + n_rot / 2)
// in the NEOX layout (qwen2: the head split in halves). Dimensions from n_rot on are left as they are.
//
// Usage: compute a position's angles once, then rotate every query and key head of that token with them.
#include <cstdint>
#include <span>

namespace infertune {

enum class RopeLayout { Interleaved, Neox };

struct RopeParams {
  uint32_t n_rot = 0;  // rotated dimensions of a head: even, at most the head size
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;  // 1 / the context scaling factor (linear and YaRN)
  RopeLayout layout = RopeLayout::Interleaved;
  std::span<const float> freq_factors;  // [n_rot / 2] per-pair frequency divisors (llama-3), empty: none
  // YaRN. ext_factor 0 (the default) leaves the angles and magnitudes of plain / linear rope untouched.
  float ext_factor = 0.0f;   // how much of the extrapolated angle the ramp mixes in: 1 for YaRN
  float attn_factor = 1.0f;  // multiplies cos and sin (before YaRN's own magnitude factor)
  uint32_t n_ctx_orig = 0;   // the context length the model was trained with (YaRN's correction dims)
  float beta_fast = 32.0f;   // pairs rotating more often than this over n_ctx_orig are extrapolated
  float beta_slow = 1.0f;    // pairs rotating less often than this over n_ctx_orig are interpolated
};

// The pair-index range of YaRN's ramp: ramp(i) = 1 - clamp((i - low) / max(0.001, high - low), 0, 1).
// low = max(0, floor(d(beta_fast))), high = min(n_rot - 1, ceil(d(beta_slow))), where
// d(b) = n_rot * ln(n_ctx_orig / (2 pi b)) / (2 ln freq_base) is the (fractional) pair whose wavelength
// fits b times into n_ctx_orig. Computed in float, as ggml does, so that the floors and ceilings agree.
struct RopeCorrDims {
  float low = 0.0f;
  float high = 0.0f;
};
RopeCorrDims rope_yarn_corr_dims(const RopeParams& params);

// The magnitude cos and sin are multiplied with (mscale above).
float rope_mscale(const RopeParams& params);

// cos, sin: [n_rot / 2], the rotation of each pair at `pos` (times mscale). The angle of pair i+1 is the
// angle of pair i times freq_base^(-2 / n_rot), accumulated in float from pos, as ggml does, so that
// positions far from 0 round the way llama.cpp does.
void rope_angles(const RopeParams& params, int64_t pos, std::span<float> cos, std::span<float> sin);

// Rotates one head [head_dim >= n_rot] in place with angles from rope_angles.
void rope_rotate(const RopeParams& params, std::span<const float> cos, std::span<const float> sin,
                 std::span<float> head);

}  // namespace infertune
