#include "kernels/ops/rope.h"

#include <cmath>
#include <cstddef>

namespace infertune {

void rope_angles(const RopeParams& params, int64_t pos, std::span<float> cos, std::span<float> sin) {
  const size_t n_pairs = params.n_rot / 2;
  const float step = std::pow(params.freq_base, -2.0f / static_cast<float>(params.n_rot));
  float theta = static_cast<float>(pos);
  for (size_t i = 0; i < n_pairs; ++i) {
    const float factor = params.freq_factors.empty() ? 1.0f : params.freq_factors[i];
    const float angle = params.freq_scale * (theta / factor);
    cos[i] = std::cos(angle);
    sin[i] = std::sin(angle);
    theta *= step;
  }
}

void rope_rotate(const RopeParams& params, std::span<const float> cos, std::span<const float> sin,
                 std::span<float> head) {
  const size_t n_pairs = params.n_rot / 2;
  // The two members of pair i sit `gap` apart, starting at first(i).
  const bool interleaved = params.layout == RopeLayout::Interleaved;
  const size_t gap = interleaved ? 1 : n_pairs;
  for (size_t i = 0; i < n_pairs; ++i) {
    const size_t a = interleaved ? 2 * i : i;
    const float x0 = head[a];
    const float x1 = head[a + gap];
    head[a] = x0 * cos[i] - x1 * sin[i];
    head[a + gap] = x0 * sin[i] + x1 * cos[i];
  }
}

}  // namespace infertune
