#pragma once
// The AVX-VNNI matmul variant ("avxvnni", Alder Lake and later, Zen 5): the kernels of the avx2 variant
// with the int8 multiply-adds done by the VEX-encoded VPDPBUSD / VPDPWSSD on 256-bit vectors, for CPUs with
// AVX-VNNI but not AVX-512 VNNI (where they have both, avx512vnni ranks higher). The integer sums are the
// same exact integers as avx2's, so the results are avx2's bit for bit. Needs avx2, fma, f16c, avx-vnni.
#include "kernels/matmul/matmul_registry.h"

namespace infertune {

MatmulVariant avxvnni_matmul_variant();

}  // namespace infertune
