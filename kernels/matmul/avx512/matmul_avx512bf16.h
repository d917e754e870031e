#pragma once
// The BF16 kernel of the avx512vnni variant on CPUs that also have avx512-bf16: VDPBF16PS multiplies 32
// bf16 weights by 32 bf16 activations per instruction and adds each lane's pair of products to an f32
// accumulator (kernels/matmul/avx512/matmul_avx512bf16.cpp says how that differs from widening).
#include "kernels/matmul/matmul.h"

namespace infertune {

// Null when this CPU lacks avx512f / bw / vl or avx512-bf16.
MatmulFn avx512bf16_dot_kernel();

}  // namespace infertune
