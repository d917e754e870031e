#pragma once
// The AVX-512 VNNI matmul variant ("avx512vnni"): the kernels of the avx2 variant with the int8 multiply-
// adds done by VPDPBUSD / VPDPWSSD on 256-bit vectors (AVX512-VL encodings), one instruction where AVX2
// needs two or three. Needs avx2, fma, f16c, avx512f/bw/vl and avx512-vnni.
#include "kernels/matmul/matmul_registry.h"

namespace infertune {

MatmulVariant avx512vnni_matmul_variant();

}  // namespace infertune
