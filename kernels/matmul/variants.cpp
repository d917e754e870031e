// The matmul variants compiled into this binary. A SIMD variant lives in its own translation unit (built
// with its own ISA flags) and is added to this list; the registry skips it on CPUs without that ISA.
#include "kernels/matmul/avx2/matmul_avx2.h"
#include "kernels/matmul/avx512/matmul_avx512vnni.h"
#include "kernels/matmul/avxvnni/matmul_avxvnni.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/matmul/scalar_matmul.h"

namespace infertune {

std::vector<MatmulVariant> compiled_matmul_variants() {
  return {scalar_matmul_variant(), avx2_matmul_variant(), avxvnni_matmul_variant(), avx512vnni_matmul_variant()};
}

}  // namespace infertune
