// Times cuda::matvec on device memory, for the speed report of tests/kernels/cuda_linear_test.cpp (the
// lead's check on a GPU; nothing asserts speed). The weights are pseudo-random bytes in enough copies that
// consecutive launches do not find them in L2 (50 MB on an H200), so the figure is the DRAM-streaming rate.
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/block_decode.h"
#include "kernels/cuda/device_ops.h"
#include "kernels/cuda/matvec_fast.h"

namespace infertune::cuda {
namespace {

__global__ void fill_kernel(uint32_t* words, uint64_t n, uint32_t seed) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t h = static_cast<uint32_t>(i) * 0x9E3779B1u ^ seed;  // a hash: random-looking codes and scales
  h ^= h >> 15;
  h *= 0x85EBCA77u;
  h ^= h >> 13;
  // Keep every half word's exponent below f16's 0x1f, so no scale is inf or NaN.
  words[i] = h & 0xBBFFBBFFu;
}

constexpr uint64_t kStreamedBytes = uint64_t{512} << 20;

}  // namespace

int time_matvec(uint32_t type_id, int64_t n_rows, int64_t n_cols, int n_tokens, int repeats, double* gbps,
                bool generic_kernel) {
  *gbps = 0.0;
  const uint64_t matrix_bytes = row_bytes(type_id, static_cast<uint64_t>(n_cols)) * static_cast<uint64_t>(n_rows);
  if (matrix_bytes == 0 || repeats < 1 || n_tokens < 1 || n_tokens > kMatvecMaxTokens) return cudaErrorInvalidValue;
  const uint64_t stride = (matrix_bytes + 255) / 256 * 256;
  const int copies = static_cast<int>(std::max<uint64_t>(2, kStreamedBytes / stride + 1));
  uint8_t* w = nullptr;
  float* x = nullptr;
  float* y = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  int err = cudaMalloc(&w, stride * copies);
  if (err == cudaSuccess) err = cudaMalloc(&x, sizeof(float) * n_cols * n_tokens);
  if (err == cudaSuccess) err = cudaMalloc(&y, sizeof(float) * n_rows * n_tokens);
  if (err == cudaSuccess) err = cudaEventCreate(&start);
  if (err == cudaSuccess) err = cudaEventCreate(&stop);
  if (err == cudaSuccess) {
    const uint64_t words = stride * copies / 4;
    fill_kernel<<<static_cast<unsigned>((words + 255) / 256), 256>>>(reinterpret_cast<uint32_t*>(w), words, 7);
    err = cudaMemset(x, 0, sizeof(float) * n_cols * n_tokens);
  }
  const auto run = [&](int i) {
    const uint8_t* m = w + stride * (i % copies);
    return generic_kernel ? matvec_generic(type_id, m, n_rows, n_cols, x, n_tokens, y, nullptr)
                          : matvec(type_id, m, n_rows, n_cols, x, n_tokens, y, nullptr);
  };
  for (int i = 0; i < copies && err == cudaSuccess; ++i) err = run(i);  // warm-up
  if (err == cudaSuccess) err = cudaEventRecord(start);
  for (int i = 0; i < repeats && err == cudaSuccess; ++i) err = run(i);
  if (err == cudaSuccess) err = cudaEventRecord(stop);
  if (err == cudaSuccess) err = cudaEventSynchronize(stop);
  float ms = 0.0f;
  if (err == cudaSuccess) err = cudaEventElapsedTime(&ms, start, stop);
  if (err == cudaSuccess && ms > 0.0f) *gbps = static_cast<double>(matrix_bytes) * repeats / (ms * 1e-3) / 1e9;
  if (stop != nullptr) cudaEventDestroy(stop);
  if (start != nullptr) cudaEventDestroy(start);
  cudaFree(y);
  cudaFree(x);
  cudaFree(w);
  return err;
}

}  // namespace infertune::cuda
