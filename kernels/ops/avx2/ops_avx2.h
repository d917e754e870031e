#pragma once
// The AVX2 + FMA + F16C ops variant ("avx2"): 8-float vectors, masked loads/stores for a row's last partial
// vector, a polynomial exp (kernels/ops/avx2/vec_math_avx2.h) for softmax and SiLU, and bit-exact decoders of
// the embedding row types F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K.
#include "kernels/ops/ops_kernels.h"

namespace infertune {

const OpsKernels& avx2_ops_kernels();
OpsVariant avx2_ops_variant();

// The AVX2 row decoder for `type`, nullptr for types without one (kernels/ops/avx2/dequant_avx2.cpp).
DequantRowFn avx2_dequant_row(GgmlType type);

}  // namespace infertune
