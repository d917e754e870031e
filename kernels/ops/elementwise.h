#pragma once
// The element-wise steps of a transformer block: residual adds, biases, the SwiGLU gate.
#include <span>

namespace infertune {

// x[i] += y[i]; x, y: [n] (residual connections, biases).
void add_in_place(std::span<float> x, std::span<const float> y);

// Adds bias [n_cols] to every row of rows [n_rows][n_cols] (rows.size() must be a multiple of n_cols);
// an empty bias adds nothing.
void add_bias_rows(std::span<float> rows, std::span<const float> bias);

// SiLU, x * sigmoid(x) = x / (1 + exp(-x)).
float silu(float x);

// out[i] = silu(gate[i]) * up[i]; gate, up, out: [n]. out may alias gate or up. add_in_place and silu_mul
// run the ops variant chosen at start-up (kernels/ops/ops_kernels.h).
void silu_mul(std::span<const float> gate, std::span<const float> up, std::span<float> out);

// gpt-oss's gated unit ("SwiGLU-OAI"): with g = min(gate[i], limit) and u = clamp(up[i], -limit, limit),
//   out[i] = g * sigmoid(alpha * g) * (u + 1)
// The clamps bound the activations the model was trained with; the +1 is part of its linear branch.
// out may alias gate or up.
inline constexpr float kSwigluOaiAlpha = 1.702f;
inline constexpr float kSwigluOaiLimit = 7.0f;
void swiglu_oai_mul(std::span<const float> gate, std::span<const float> up, std::span<float> out);

}  // namespace infertune
