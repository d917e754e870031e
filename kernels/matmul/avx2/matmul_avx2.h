#pragma once
// The AVX2 + FMA + F16C matmul variant ("avx2"): integer dot products of weight codes with int8-quantized
// activations (maddubs), block scales applied in float. Runs on any x86-64 CPU with those extensions.
#include "kernels/matmul/matmul_registry.h"

namespace infertune {

MatmulVariant avx2_matmul_variant();

}  // namespace infertune
