// Times the two batched weight products of a prompt, for the speed report of tests/kernels/cuda_linear_test.cpp
// (nothing asserts speed): the f16 path as the engine runs it (the matrix decoded to f16 a slice of rows at
// a time, each slice a cuBLAS GEMM) and the int8 path (the activations quantized, then gemm_int8). The
// weights are pseudo-random blocks of valid scales; the figure counts 2 * rows * cols * tokens operations.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/block_decode.h"
#include "kernels/cuda/device_ops.h"
#include "kernels/cuda/device_runtime.h"

namespace infertune::cuda {
namespace {

__global__ void fill_words_kernel(uint32_t* words, uint64_t n, uint32_t seed) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t h = static_cast<uint32_t>(i) * 0x9E3779B1u ^ seed;
  h ^= h >> 15;
  h *= 0x85EBCA77u;
  h ^= h >> 13;
  words[i] = h & 0xBBFFBBFFu;  // no half word's exponent is 0x1f: no scale is inf or NaN
}

constexpr int64_t kSliceValues = int64_t{32} << 20;  // the engine's f16 slice (kF16ChunkValues)

struct Buffers {
  uint8_t* w = nullptr;
  float* x = nullptr;
  float* y = nullptr;
  void* w16 = nullptr;
  void* x16 = nullptr;
  int8_t* xq = nullptr;
  float* xd = nullptr;
  ~Buffers() {
    for (void* p : {static_cast<void*>(w), static_cast<void*>(x), static_cast<void*>(y), w16, x16,
                    static_cast<void*>(xq), static_cast<void*>(xd)}) {
      cudaFree(p);
    }
  }
};

int batched_f16(void* blas, uint32_t type_id, const Buffers& b, int64_t n_rows, int64_t n_cols, int n_tokens) {
  int err = convert_to_f16(b.x, static_cast<int64_t>(n_tokens) * n_cols, b.x16, nullptr);
  const int64_t slice_rows = std::max<int64_t>(1, kSliceValues / n_cols);
  const uint64_t rb = row_bytes(type_id, static_cast<uint64_t>(n_cols));
  for (int64_t r0 = 0; r0 < n_rows && err == cudaSuccess; r0 += slice_rows) {
    const int64_t rows = std::min(slice_rows, n_rows - r0);
    err = dequantize_to_f16(type_id, b.w + r0 * rb, rows, n_cols, b.w16, nullptr);
    if (err == cudaSuccess) err = gemm_f16(blas, b.w16, rows, n_cols, b.x16, n_tokens, b.y + r0, n_rows);
  }
  return err;
}

int batched_int8(uint32_t type_id, const Buffers& b, int64_t n_rows, int64_t n_cols, int n_tokens) {
  int err = quantize_activations_q8(b.x, n_tokens, n_cols, b.xq, b.xd, nullptr);
  if (err == cudaSuccess) err = gemm_int8(type_id, b.w, n_rows, n_cols, b.xq, b.xd, n_tokens, b.y, n_rows, nullptr);
  return err;
}

}  // namespace

int time_batched(uint32_t type_id, int64_t n_rows, int64_t n_cols, int n_tokens, int repeats, bool int8,
                 double* tflops) {
  *tflops = 0.0;
  const uint64_t matrix_bytes = row_bytes(type_id, static_cast<uint64_t>(n_cols)) * static_cast<uint64_t>(n_rows);
  if (matrix_bytes == 0 || repeats < 1 || n_tokens < 1 || (int8 && !int8_form_supported(type_id))) {
    return cudaErrorInvalidValue;
  }
  Buffers b;
  const int64_t values = static_cast<int64_t>(n_tokens) * n_cols;
  int err = cudaMalloc(&b.w, matrix_bytes);
  if (err == cudaSuccess) err = cudaMalloc(&b.x, values * sizeof(float));
  if (err == cudaSuccess) err = cudaMalloc(&b.y, static_cast<int64_t>(n_tokens) * n_rows * sizeof(float));
  if (err == cudaSuccess) err = cudaMalloc(&b.w16, std::min(kSliceValues / n_cols, n_rows) * n_cols * 2);
  if (err == cudaSuccess) err = cudaMalloc(&b.x16, values * 2);
  if (err == cudaSuccess) err = cudaMalloc(&b.xq, values);
  if (err == cudaSuccess) err = cudaMalloc(&b.xd, values / 32 * sizeof(float));
  if (err == cudaSuccess) {
    const uint64_t words = matrix_bytes / 4;
    fill_words_kernel<<<static_cast<unsigned>((words + 255) / 256), 256>>>(reinterpret_cast<uint32_t*>(b.w), words, 11);
    err = cudaMemset(b.x, 0, values * sizeof(float));
  }
  void* blas = nullptr;
  if (err == cudaSuccess && !int8) err = blas_create(&blas, nullptr);
  const auto run = [&] {
    return int8 ? batched_int8(type_id, b, n_rows, n_cols, n_tokens)
                : batched_f16(blas, type_id, b, n_rows, n_cols, n_tokens);
  };
  cudaEvent_t start = nullptr, stop = nullptr;
  if (err == cudaSuccess) err = run();  // warm-up
  if (err == cudaSuccess) err = cudaEventCreate(&start);
  if (err == cudaSuccess) err = cudaEventCreate(&stop);
  if (err == cudaSuccess) err = cudaEventRecord(start);
  for (int i = 0; i < repeats && err == cudaSuccess; ++i) err = run();
  if (err == cudaSuccess) err = cudaEventRecord(stop);
  if (err == cudaSuccess) err = cudaEventSynchronize(stop);
  float ms = 0.0f;
  if (err == cudaSuccess) err = cudaEventElapsedTime(&ms, start, stop);
  if (err == cudaSuccess && ms > 0.0f) {
    *tflops = 2.0 * static_cast<double>(n_rows) * n_cols * n_tokens * repeats / (ms * 1e-3) / 1e12;
  }
  if (stop != nullptr) cudaEventDestroy(stop);
  if (start != nullptr) cudaEventDestroy(start);
  blas_destroy(blas);
  return err;
}

}  // namespace infertune::cuda
