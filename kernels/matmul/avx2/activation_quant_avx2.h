#pragma once
// AVX2 versions of the row quantizers of kernels/matmul/activation_quant.h, bit for bit the same results
// (the same scale, the same products, round to nearest even). Call only on a CPU with AVX2;
// activation_quant.cpp picks them when it has.
#include <cstddef>
#include <cstdint>

#include "kernels/quant/blocks_k.h"

namespace infertune {

void quantize_row_q8_avx2(const float* x, size_t n, int8_t* codes, float* d, float* dsum, int32_t* isum = nullptr);
void quantize_row_q8k_avx2(const float* x, size_t n, kquant::BlockQ8K* out);

}  // namespace infertune
