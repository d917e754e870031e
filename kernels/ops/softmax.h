#pragma once
// Numerically stable softmax over one row of attention scores.
#include <span>

namespace infertune {

// In place: x[i] = exp(x[i] - max) / sum_j exp(x[j] - max). -inf entries (masked) become 0; a row that is
// entirely -inf becomes all zeros rather than NaN. The sum is accumulated in double. SIMD variants use a
// polynomial exp within 2 ulp of std::exp (kernels/ops/ops_kernels.h picks the variant).
void softmax(std::span<float> x);

}  // namespace infertune
