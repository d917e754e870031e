#pragma once
// The AVX-512 ops variant ("avx512", needs AVX-512F besides AVX2/FMA/F16C): 16-float vectors with mask
// registers for a row's last partial vector, for the ops that are arithmetic-bound (softmax and SiLU with
// their exp, RMSNorm's double sum) and the residual add. Rope (8 or fewer pairs per vector at head sizes
// 64/128) and the embedding row decoders are the AVX2 ones.
#include "kernels/ops/ops_kernels.h"

namespace infertune {

const OpsKernels& avx512_ops_kernels();
OpsVariant avx512_ops_variant();

}  // namespace infertune
