#include "kernels/ops/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "kernels/ops/ops_kernels.h"

namespace infertune {

void add_in_place(std::span<float> x, std::span<const float> y) { ops_kernels().add(x.data(), y.data(), x.size()); }

void add_bias_rows(std::span<float> rows, std::span<const float> bias) {
  const size_t n_cols = bias.size();
  if (n_cols == 0) return;
  for (size_t start = 0; start + n_cols <= rows.size(); start += n_cols) {
    add_in_place(rows.subspan(start, n_cols), bias);
  }
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }

void silu_mul(std::span<const float> gate, std::span<const float> up, std::span<float> out) {
  ops_kernels().silu_mul(gate.data(), up.data(), out.size(), out.data());
}

void swiglu_oai_mul(std::span<const float> gate, std::span<const float> up, std::span<float> out) {
  for (size_t i = 0; i < out.size(); ++i) {
    const float g = std::min(gate[i], kSwigluOaiLimit);
    const float u = std::clamp(up[i], -kSwigluOaiLimit, kSwigluOaiLimit);
    out[i] = g / (1.0f + std::exp(-kSwigluOaiAlpha * g)) * (u + 1.0f);
  }
}

}  // namespace infertune
