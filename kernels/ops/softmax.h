#pragma once
// Numerically stable softmax over one row of attention scores.
#include <span>

namespace infertune {

// In place: x[i] = exp(x[i] - max) / sum_j exp(x[j] - max). -inf entries (masked) become 0; a row that is
// entirely -inf becomes all zeros rather than NaN. The sum is accumulated in double.
void softmax(std::span<float> x);

}  // namespace infertune
