#pragma once
// Rotary position embeddings (RoPE). Pair i of a head (i < n_rot / 2) is rotated by the angle
//   pos * freq_scale * freq_base^(-2i / n_rot) / freq_factors[i]
// The pairs are (2i, 2i + 1) in the interleaved layout (llama) and (i, i + n_rot / 2) in the NEOX layout
// (qwen2: the head split in halves). Dimensions from n_rot on are left as they are.
//
// Usage: compute a position's angles once, then rotate every query and key head of that token with them.
#include <cstdint>
#include <span>

namespace infertune {

enum class RopeLayout { Interleaved, Neox };

struct RopeParams {
  uint32_t n_rot = 0;  // rotated dimensions of a head: even, at most the head size
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;  // 1 / the linear scaling factor ("linear" context extension)
  RopeLayout layout = RopeLayout::Interleaved;
  std::span<const float> freq_factors;  // [n_rot / 2] per-pair frequency divisors (llama-3), empty: none
};

// cos, sin: [n_rot / 2], the rotation of each pair at `pos`. The angle of pair i+1 is the angle of pair i
// times freq_base^(-2 / n_rot), accumulated in float from pos, as ggml does, so that positions far from 0
// round the way llama.cpp does.
void rope_angles(const RopeParams& params, int64_t pos, std::span<float> cos, std::span<float> sin);

// Rotates one head [head_dim >= n_rot] in place with angles from rope_angles.
void rope_rotate(const RopeParams& params, std::span<const float> cos, std::span<const float> sin,
                 std::span<float> head);

}  // namespace infertune
