// The current device's roofline figures for `probe` and the roofline of GPU tests: its memory bandwidth as a
// streaming copy kernel sees it (what a memory-bound matrix-vector product can reach) and its f16 tensor
// throughput as cuBLAS reaches it (what a prompt batch's products can reach).
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/cuda/device_ops.h"
#include "kernels/cuda/device_runtime.h"

namespace infertune::cuda {
namespace {

__global__ void copy_kernel(const float4* src, float4* dst, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dst[i] = src[i];
  }
}

// Values in [-1, 1) from the element index: zeros would let the tensor cores idle at lower power (and clock
// higher) than real weights do, overstating the peak.
__global__ void fill_kernel(__half* x, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint32_t h = static_cast<uint32_t>(i) * 2654435761u;
    x[i] = __float2half(static_cast<float>(h >> 16) / 32768.0f - 1.0f);
  }
}

int blas_code(cublasStatus_t s) { return blas_status_code(static_cast<int>(s)); }

// The SM count of the current device (the one set_device chose), for a grid that fills it.
cudaError_t current_sm_count(int* sms) {
  int device = 0;
  const cudaError_t e = cudaGetDevice(&device);
  return e == cudaSuccess ? cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device) : e;
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
  if (e == cudaSuccess) e = current_sm_count(&sms);
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

int measure_gemm_tflops(int n, int repeats, double* tflops) {
  *tflops = 0.0;
  if (n < 16 || repeats < 1) return cudaErrorInvalidValue;
  const int64_t elements = int64_t(n) * n;
  __half* a = nullptr;
  __half* b = nullptr;
  float* c = nullptr;
  cublasHandle_t blas = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  int code = cudaMalloc(&a, elements * sizeof(__half));
  if (code == 0) code = cudaMalloc(&b, elements * sizeof(__half));
  if (code == 0) code = cudaMalloc(&c, elements * sizeof(float));
  if (code == 0) code = blas_code(cublasCreate(&blas));  // on the default stream, as the events below
  if (code == 0) code = cudaEventCreate(&start);
  if (code == 0) code = cudaEventCreate(&stop);
  int sms = 0;
  if (code == 0) code = current_sm_count(&sms);
  if (code == 0) {
    fill_kernel<<<sms * 4, 256>>>(a, elements);
    fill_kernel<<<sms * 4, 256>>>(b, elements);
    code = cudaGetLastError();
  }
  const float one = 1.0f, zero = 0.0f;
  // C [n][n] f32 = A [n][n] x B [n][n], f16 operands, f32 accumulation: the engine's gemm_f16 (linear.cu).
  const auto gemm = [&] {
    return blas_code(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16F, n, b, CUDA_R_16F, n,
                                  &zero, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  if (code == 0) code = gemm();  // warm-up: cuBLAS picks and loads its kernel here
  if (code == 0) code = cudaEventRecord(start);
  for (int r = 0; r < repeats && code == 0; ++r) code = gemm();
  if (code == 0) code = cudaEventRecord(stop);
  if (code == 0) code = cudaEventSynchronize(stop);
  float ms = 0.0f;
  if (code == 0) code = cudaEventElapsedTime(&ms, start, stop);
  if (code == 0 && ms > 0.0f) *tflops = 2.0 * double(n) * n * n * repeats / (ms * 1e-3) / 1e12;
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  if (blas) cublasDestroy(blas);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  if (code != 0) cudaGetLastError();  // an allocation failure is not sticky; clear it
  return code;
}

}  // namespace infertune::cuda
