#pragma once
// Throughput loops for the arithmetic the engine's kernels are made of: f32 FMA and the u8 x s8 -> s32
// dot product (VNNI's vpdpbusd, or AVX2's maddubs + madd). Each runs several independent accumulator
// chains so the loop is bound by issue width, not latency. Every variant is compiled with
// __attribute__((target)) and picked at run time from cpu_features().
//
// What each loop computes is defined exactly, so tests can check it against a scalar model:
//  f32:  every lane of chain k starts at 1 + k/16 and steps v = v * a + b (one rounding where FMA exists);
//        the result is the sum of all lanes' final values.
//  int8: every s32 lane starts at k (its chain) and adds 4 * ua * sb per step (four u8 ua times s8 sb
//        products); the result is the sum of all lanes (each wrapped to s32). The AVX2 variant adds pairs
//        in s16 first, so callers keep 2 * ua * |sb| <= 32767.
#include <cstdint>
#include <string_view>
#include <vector>

namespace infertune {

struct F32FmaKernel {
  std::string_view isa;  // "avx512f", "avx2+fma", "scalar"
  unsigned chains = 0;   // independent accumulators
  unsigned lanes = 0;    // f32 lanes per accumulator
  bool fused = false;    // one rounding per step (FMA) rather than two
  double (*run)(uint64_t steps, float a, float b) = nullptr;
  double flops_per_step() const { return 2.0 * chains * lanes; }
};

struct Int8DotKernel {
  std::string_view isa;  // "avx512-vnni", "avx-vnni", "avx2", "scalar"
  unsigned chains = 0;
  unsigned lanes = 0;  // s32 lanes per accumulator, each taking 4 products per step
  double (*run)(uint64_t steps, uint8_t ua, int8_t sb) = nullptr;
  double ops_per_step() const { return 2.0 * 4 * chains * lanes; }  // a multiply and an add per product
};

// The variants this CPU can run, best first; never empty (scalar always runs).
std::vector<F32FmaKernel> available_f32_fma_kernels();
std::vector<Int8DotKernel> available_int8_dot_kernels();

}  // namespace infertune
