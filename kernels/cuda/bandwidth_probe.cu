// The device's memory bandwidth as a streaming copy kernel sees it (what a memory-bound matrix-vector
// product can reach), for `probe` and the roofline of GPU tests.
#include <cuda_runtime.h>

#include "kernels/cuda/device_ops.h"

namespace infertune::cuda {
namespace {

__global__ void copy_kernel(const float4* src, float4* dst, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dst[i] = src[i];
  }
}

}  // namespace

int measure_copy_bandwidth(size_t bytes, int repeats, double* gbps) {
  *gbps = 0.0;
  const int64_t n = static_cast<int64_t>(bytes / sizeof(float4));
  if (n == 0 || repeats < 1) return cudaErrorInvalidValue;
  float4* src = nullptr;
  float4* dst = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaError_t e = cudaMalloc(&src, n * sizeof(float4));
  if (e == cudaSuccess) e = cudaMalloc(&dst, n * sizeof(float4));
  if (e == cudaSuccess) e = cudaMemset(src, 0, n * sizeof(float4));
  if (e == cudaSuccess) e = cudaEventCreate(&start);
  if (e == cudaSuccess) e = cudaEventCreate(&stop);
  int sms = 0;
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  if (e == cudaSuccess) {
    const unsigned grid = static_cast<unsigned>(sms * 8);
    copy_kernel<<<grid, 256>>>(src, dst, n);  // warm-up
    cudaEventRecord(start);
    for (int r = 0; r < repeats; ++r) copy_kernel<<<grid, 256>>>(src, dst, n);
    cudaEventRecord(stop);
    e = cudaEventSynchronize(stop);
  }
  float ms = 0.0f;
  if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, start, stop);
  if (e == cudaSuccess && ms > 0.0f) *gbps = 2.0 * n * sizeof(float4) * repeats / (ms * 1e-3) / 1e9;
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  cudaFree(src);
  cudaFree(dst);
  if (e != cudaSuccess) cudaGetLastError();
  return e;
}

}  // namespace infertune::cuda
