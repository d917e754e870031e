#pragma once
// The scalar reference ops ("scalar"): plain loops that every SIMD variant is tested against. Always
// available; INFERTUNE_KERNEL=scalar selects it.
#include "kernels/ops/ops_kernels.h"

namespace infertune {

const OpsKernels& scalar_ops_kernels();
OpsVariant scalar_ops_variant();

}  // namespace infertune
