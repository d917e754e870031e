#include "bench/probe/stream_kernels.h"

#include <immintrin.h>

#include "kernels/cpu_features.h"

namespace infertune {
namespace {

// Independent accumulators in every variant (four in the one-stream ones, two per stream in the others),
// so the adds never wait on one another and the loop is bound by loads alone.

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

// How far ahead of each stream's loads the software prefetch reaches: 1 KiB (16 cache lines) per stream,
// so 4 streams keep 64 lines in flight per core, enough to cover DRAM latency at a core's share of the
// bandwidth, and few enough not to evict the lines about to be read from L1/L2.
constexpr size_t kPrefetchAheadWords = 1024 / sizeof(uint64_t);
constexpr size_t kStepWords = 16;  // two cache lines per stream per step

// kStreams interleaved streams over consecutive parts of [0, n): each step reads two cache lines of every
// part and prefetches the lines kPrefetchAheadWords ahead of them (prefetches past the end are harmless:
// they never fault). Two accumulators per stream keep the adds off the critical path.
template <int kStreams>
__attribute__((target("avx512f"))) uint64_t read_sum_avx512_streams(const uint64_t* words, size_t n) {
  const size_t part = n / kStreams / kStepWords * kStepWords;
  __m512i acc[kStreams][2];
  for (auto& a : acc) a[0] = a[1] = _mm512_setzero_si512();
  for (size_t i = 0; i < part; i += kStepWords) {
    for (int s = 0; s < kStreams; ++s) {
      const uint64_t* p = words + s * part + i;
      _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchAheadWords), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchAheadWords + 8), _MM_HINT_T0);
      acc[s][0] = _mm512_add_epi64(acc[s][0], _mm512_loadu_si512(p));
      acc[s][1] = _mm512_add_epi64(acc[s][1], _mm512_loadu_si512(p + 8));
    }
  }
  __m512i total = _mm512_setzero_si512();
  for (const auto& a : acc) total = _mm512_add_epi64(total, _mm512_add_epi64(a[0], a[1]));
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, total);
  const size_t done = kStreams * part;
  return read_sum_scalar(lanes, 8) + read_sum_scalar(words + done, n - done);
}

template <int kStreams>
__attribute__((target("avx2"))) uint64_t read_sum_avx2_streams(const uint64_t* words, size_t n) {
  const size_t part = n / kStreams / kStepWords * kStepWords;
  __m256i acc[kStreams][2];
  for (auto& a : acc) a[0] = a[1] = _mm256_setzero_si256();
  for (size_t i = 0; i < part; i += kStepWords) {
    for (int s = 0; s < kStreams; ++s) {
      const uint64_t* p = words + s * part + i;
      _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchAheadWords), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchAheadWords + 8), _MM_HINT_T0);
      const auto* v = reinterpret_cast<const __m256i*>(p);
      acc[s][0] = _mm256_add_epi64(acc[s][0], _mm256_add_epi64(_mm256_loadu_si256(v), _mm256_loadu_si256(v + 1)));
      acc[s][1] = _mm256_add_epi64(acc[s][1], _mm256_add_epi64(_mm256_loadu_si256(v + 2), _mm256_loadu_si256(v + 3)));
    }
  }
  __m256i total = _mm256_setzero_si256();
  for (const auto& a : acc) total = _mm256_add_epi64(total, _mm256_add_epi64(a[0], a[1]));
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), total);
  const size_t done = kStreams * part;
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + read_sum_scalar(words + done, n - done);
}

}  // namespace

std::vector<ReadSumKernel> available_read_sum_kernels() {
  const CpuFeatures& cpu = cpu_features();
  std::vector<ReadSumKernel> kernels;
  if (cpu.avx512f) {
    kernels.push_back({"avx512f", read_sum_avx512, 1});
    kernels.push_back({"avx512f", read_sum_avx512_streams<4>, 4});
    kernels.push_back({"avx512f", read_sum_avx512_streams<8>, 8});
  }
  if (cpu.avx2) {
    kernels.push_back({"avx2", read_sum_avx2, 1});
    kernels.push_back({"avx2", read_sum_avx2_streams<4>, 4});
    kernels.push_back({"avx2", read_sum_avx2_streams<8>, 8});
  }
  kernels.push_back({"scalar", read_sum_scalar, 1});
  return kernels;
}

void stream_triad(double* a, const double* b, const double* c, double scalar, size_t n) {
  for (size_t i = 0; i < n; ++i) a[i] = b[i] + scalar * c[i];
}

}  // namespace infertune
