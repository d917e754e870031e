#pragma once
// The AVX-512 VNNI matmul variant ("avx512vnni"): the kernels of the avx2 variant with the int8 multiply-
// adds done by VPDPBUSD / VPDPWSSD on 256-bit vectors (AVX512-VL encodings), one instruction where AVX2
// needs two or three; the float weight types (F32, F16, BF16) on 512-bit vectors. Needs avx2, fma, f16c,
// avx512f/bw/vl and avx512-vnni.
#include "kernels/matmul/matmul_registry.h"

namespace infertune {

MatmulVariant avx512vnni_matmul_variant();

// The variant's BF16 kernel takes VDPBF16PS where the CPU has avx512-bf16 (avx512bf16_dot_kernel); this
// is its other one, bf16 widened to f32 by shifts, for tests that check both on such a CPU.
MatmulFn avx512vnni_bf16_widening_kernel();

}  // namespace infertune
