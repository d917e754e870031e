#pragma once
// RMS normalization as llama-family models use it: out = x / sqrt(mean(x^2) + eps) * gain.
#include <span>

namespace infertune {

// x, gain, out: [n]. out may alias x. The sum of squares is accumulated in double (as ggml does), so the
// result barely depends on the order of the values. Runs the ops variant chosen at start-up
// (kernels/ops/ops_kernels.h); the scalar reference is in kernels/ops/scalar_ops.cpp.
void rms_norm(std::span<const float> x, std::span<const float> gain, float eps, std::span<float> out);

}  // namespace infertune
