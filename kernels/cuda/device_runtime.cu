// The CUDA runtime calls behind device_runtime.h.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "kernels/cuda/device_runtime.h"

namespace infertune::cuda {
namespace {

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

}  // namespace

std::string error_text(int code) {
  if (code == 0) return "success";
  if (code == kNotCompiled) return "this build has no CUDA backend";
  if (code <= kBlasErrorBase)
    return std::string("cuBLAS: ") + cublasGetStatusString(static_cast<cublasStatus_t>(kBlasErrorBase - code));
  return cudaGetErrorString(static_cast<cudaError_t>(code));
}

int device_count(int* count) {
  *count = 0;
  return cudaGetDeviceCount(count);
}
int set_device(int device) { return cudaSetDevice(device); }
int memory_info(size_t* free_bytes, size_t* total_bytes) { return cudaMemGetInfo(free_bytes, total_bytes); }

int device_alloc(void** ptr, size_t bytes) {
  *ptr = nullptr;
  const cudaError_t e = cudaMalloc(ptr, bytes == 0 ? 1 : bytes);
  if (e != cudaSuccess) cudaGetLastError();  // an allocation failure is not sticky; clear it
  return e;
}
void device_free(void* ptr) {
  if (ptr) cudaFree(ptr);
}
int host_alloc_pinned(void** ptr, size_t bytes) {
  *ptr = nullptr;
  return cudaMallocHost(ptr, bytes == 0 ? 1 : bytes);
}
void host_free_pinned(void* ptr) {
  if (ptr) cudaFreeHost(ptr);
}

int stream_create(void** stream) {
  cudaStream_t s = nullptr;
  const cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  *stream = s;
  return e;
}
void stream_destroy(void* stream) {
  if (stream) cudaStreamDestroy(as_stream(stream));
}
int stream_synchronize(void* stream) { return cudaStreamSynchronize(as_stream(stream)); }

int copy_to_device(void* dst, const void* src, size_t bytes, void* stream) {
  return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, as_stream(stream));
}
int copy_to_host(void* dst, const void* src, size_t bytes, void* stream) {
  const cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, as_stream(stream));
  if (e != cudaSuccess) return e;
  return cudaStreamSynchronize(as_stream(stream));  // the caller reads dst next
}
int copy_on_device(void* dst, const void* src, size_t bytes, void* stream) {
  return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, as_stream(stream));
}

int blas_create(void** handle, void* stream) {
  cublasHandle_t h = nullptr;
  cublasStatus_t s = cublasCreate(&h);
  if (s != CUBLAS_STATUS_SUCCESS) return blas_status_code(static_cast<int>(s));
  s = cublasSetStream(h, as_stream(stream));
  if (s != CUBLAS_STATUS_SUCCESS) {
    cublasDestroy(h);
    return blas_status_code(static_cast<int>(s));
  }
  *handle = h;
  return 0;
}
void blas_destroy(void* handle) {
  if (handle) cublasDestroy(static_cast<cublasHandle_t>(handle));
}

}  // namespace infertune::cuda
