// The ops variants compiled into this binary. A SIMD variant lives in its own translation unit (built for its
// ISA with a target pragma) and is added here; variants the CPU cannot run are skipped at selection.
#include "kernels/ops/avx2/ops_avx2.h"
#include "kernels/ops/avx512/ops_avx512.h"
#include "kernels/ops/ops_kernels.h"
#include "kernels/ops/scalar_ops.h"

namespace infertune {

std::vector<OpsVariant> compiled_ops_variants() {
  return {scalar_ops_variant(), avx2_ops_variant(), avx512_ops_variant()};
}

}  // namespace infertune
