#include "bench/probe/stream_kernels.h"

#include <immintrin.h>

#include "kernels/cpu_features.h"

namespace infertune {
namespace {

// Four independent accumulators in every variant, so the adds never wait on one another and the loop is
// bound by loads alone.

uint64_t read_sum_scalar(const uint64_t* words, size_t n) {
  uint64_t acc[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int k = 0; k < 4; ++k) acc[k] += words[i + k];
  }
  uint64_t sum = acc[0] + acc[1] + acc[2] + acc[3];
  for (; i < n; ++i) sum += words[i];
  return sum;
}

__attribute__((target("avx2"))) uint64_t read_sum_avx2(const uint64_t* words, size_t n) {
  __m256i acc0 = _mm256_setzero_si256(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const auto* p = reinterpret_cast<const __m256i*>(words + i);
    acc0 = _mm256_add_epi64(acc0, _mm256_loadu_si256(p + 0));
    acc1 = _mm256_add_epi64(acc1, _mm256_loadu_si256(p + 1));
    acc2 = _mm256_add_epi64(acc2, _mm256_loadu_si256(p + 2));
    acc3 = _mm256_add_epi64(acc3, _mm256_loadu_si256(p + 3));
  }
  const __m256i total = _mm256_add_epi64(_mm256_add_epi64(acc0, acc1), _mm256_add_epi64(acc2, acc3));
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), total);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + read_sum_scalar(words + i, n - i);
}

__attribute__((target("avx512f"))) uint64_t read_sum_avx512(const uint64_t* words, size_t n) {
  __m512i acc0 = _mm512_setzero_si512(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const uint64_t* p = words + i;
    acc0 = _mm512_add_epi64(acc0, _mm512_loadu_si512(p + 0));
    acc1 = _mm512_add_epi64(acc1, _mm512_loadu_si512(p + 8));
    acc2 = _mm512_add_epi64(acc2, _mm512_loadu_si512(p + 16));
    acc3 = _mm512_add_epi64(acc3, _mm512_loadu_si512(p + 24));
  }
  const __m512i total = _mm512_add_epi64(_mm512_add_epi64(acc0, acc1), _mm512_add_epi64(acc2, acc3));
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, total);
  return read_sum_scalar(lanes, 8) + read_sum_scalar(words + i, n - i);
}

}  // namespace

std::vector<ReadSumKernel> available_read_sum_kernels() {
  const CpuFeatures& cpu = cpu_features();
  std::vector<ReadSumKernel> kernels;
  if (cpu.avx512f) kernels.push_back({"avx512f", read_sum_avx512});
  if (cpu.avx2) kernels.push_back({"avx2", read_sum_avx2});
  kernels.push_back({"scalar", read_sum_scalar});
  return kernels;
}

void stream_triad(double* a, const double* b, const double* c, double scalar, size_t n) {
  for (size_t i = 0; i < n; ++i) a[i] = b[i] + scalar * c[i];
}

}  // namespace infertune
