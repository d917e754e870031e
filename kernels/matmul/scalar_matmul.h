#pragma once
// The scalar reference matmul: each weight row is decoded to floats (the reference codecs of
// kernels/quant.h) into a per-thread buffer, then dotted with every activation row (for F16 / BF16 weights
// rounded to the weight type, as ggml pairs them), accumulating in double. Slow but exact enough to be the
// yardstick for every faster variant.
#include <vector>

#include "kernels/matmul/matmul_registry.h"

namespace infertune {

// Kernels for every type that has a reference codec; variant name "scalar", the lowest priority.
MatmulVariant scalar_matmul_variant();

// sum_i a[i] * b[i] in double, in a fixed order (so results are reproducible across runs and threads).
double dot_f32_double(const float* a, const float* b, size_t n);

}  // namespace infertune
