#pragma once
// The streaming kernels behind the bandwidth figures. The read kernel sums the buffer's 64-bit words, so
// its loads cannot be dropped by the compiler and its answer can be checked; each ISA variant is compiled
// with __attribute__((target)) and chosen at run time from cpu_features().
//
// Each SIMD ISA comes in several access shapes, because which one reaches a host's peak depends on its
// prefetchers and how many misses a core keeps in flight: one sequential stream (what the hardware
// prefetcher likes best), and 4 or 8 interleaved streams over the four / eight parts of the range, each
// with software prefetch ahead (the shape of the engine's matrix-vector kernels, which read 8 weight rows
// at once and prefetch the next ones; a probe slower than them would put a decode above 100% roofline).
// The bandwidth probe measures every shape and keeps the fastest.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace infertune {

// Sum of words[0..n) modulo 2^64. words need no particular alignment.
using ReadSumFn = uint64_t (*)(const uint64_t* words, size_t n);

struct ReadSumKernel {
  std::string_view isa;  // "avx512f", "avx2", "scalar"
  ReadSumFn sum = nullptr;
  unsigned streams = 1;  // interleaved sequential streams (more than 1: with software prefetch)
};

// The variants this CPU can run, widest ISA first (each ISA's shapes together); never empty (scalar
// always runs).
std::vector<ReadSumKernel> available_read_sum_kernels();

// STREAM's triad over n elements: a[i] = b[i] + scalar * c[i]. It moves 3 * 8 * n bytes by STREAM's count
// (the write-allocate read of `a` is not counted).
void stream_triad(double* a, const double* b, const double* c, double scalar, size_t n);

}  // namespace infertune
