// Weight products on the GPU: the matrix-vector kernel that decodes GGUF blocks on the fly (one token, or
// a few: memory-bound, one pass over the weights), and the batched path (weights decoded to f16, then a
// cuBLAS GEMM with f32 accumulation) for prompt batches.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <string_view>

#include "kernels/cuda/block_decode.h"
#include "kernels/cuda/device_ops.h"
#include "kernels/cuda/device_runtime.h"
#include "kernels/cuda/matvec_fast.h"

namespace infertune::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kPiece = 32;        // values one thread decodes at a time (block_decode.h)
constexpr int kRowsPerBlock = 4;  // one warp per weight row

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// The dot product of 32 decoded weights with 32 activations (16-byte loads through the read-only cache).
__device__ __forceinline__ float dot_piece(const float* v, const float* x) {
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < kPiece / 4; ++i) {
    const float4 xv = __ldg(x4 + i);
    s += v[4 * i] * xv.x + v[4 * i + 1] * xv.y + v[4 * i + 2] * xv.z + v[4 * i + 3] * xv.w;
  }
  return s;
}

// A warp per row; lane l decodes pieces l, l + 32, ... of it (consecutive lanes read consecutive bytes)
// and dots each with every token's activations, so the weights are read once for all tokens.
template <BlockType T>
__global__ void matvec_kernel(const uint8_t* w, int64_t n_rows, int64_t n_cols, uint64_t row_bytes, const float* x,
                              int n_tokens, float* y) {
  const int lane = threadIdx.x % kWarp;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
  if (row >= n_rows) return;
  const uint8_t* weights = w + row * row_bytes;
  const int64_t n_pieces = n_cols / kPiece;
  float acc[kMatvecMaxTokens] = {};
  for (int64_t p = lane; p < n_pieces; p += kWarp) {
    float v[kPiece];
    decode_piece<T>(weights, p, v);
#pragma unroll
    for (int t = 0; t < kMatvecMaxTokens; ++t) {
      if (t < n_tokens) acc[t] += dot_piece(v, x + t * n_cols + p * kPiece);
    }
  }
#pragma unroll
  for (int t = 0; t < kMatvecMaxTokens; ++t) {
    if (t < n_tokens) {
      const float s = warp_sum(acc[t]);
      if (lane == 0) y[t * n_rows + row] = s;
    }
  }
}

// One thread per piece: decode 32 values, write them as f16.
template <BlockType T>
__global__ void dequantize_f16_kernel(const uint8_t* w, int64_t n_rows, int64_t n_cols, uint64_t row_bytes,
                                      __half* out) {
  const int64_t n_pieces = n_cols / kPiece;
  const int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= n_rows * n_pieces) return;
  const int64_t row = g / n_pieces;
  const int64_t p = g % n_pieces;
  float v[kPiece];
  decode_piece<T>(w + row * row_bytes, p, v);
  __half2* dst = reinterpret_cast<__half2*>(out + row * n_cols + p * kPiece);
#pragma unroll
  for (int i = 0; i < kPiece / 2; ++i) dst[i] = __floats2half2_rn(v[2 * i], v[2 * i + 1]);
}

__global__ void convert_f16_kernel(const float* x, int64_t n, __half* out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2half_rn(x[i]);
}

unsigned blocks_for(int64_t n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

}  // namespace

bool weight_type_supported(uint32_t type_id) { return supported(type_id); }

// The common weight types take the fast kernels (matvec_fast.cu) when their alignment allows; the rest,
// and unaligned weights, the generic one.
int matvec(uint32_t type_id, const void* w, int64_t n_rows, int64_t n_cols, const float* x, int64_t n_tokens, float* y,
           void* stream) {
  if (n_tokens < 1 || n_tokens > kMatvecMaxTokens || n_cols % kPiece != 0) return cudaErrorInvalidValue;
  // INFERTUNE_CUDA_MATVEC=generic keeps every type on the generic kernel (a fallback and a baseline).
  static const bool generic_only = [] {
    const char* choice = std::getenv("INFERTUNE_CUDA_MATVEC");
    return choice != nullptr && std::string_view(choice) == "generic";
  }();
  if (!generic_only && matvec_fast_applies(type_id, w, n_cols, x)) {
    return matvec_fast(type_id, w, n_rows, n_cols, x, n_tokens, y, stream);
  }
  return matvec_generic(type_id, w, n_rows, n_cols, x, n_tokens, y, stream);
}

int matvec_generic(uint32_t type_id, const void* w, int64_t n_rows, int64_t n_cols, const float* x, int64_t n_tokens,
                   float* y, void* stream) {
  if (n_tokens < 1 || n_tokens > kMatvecMaxTokens || n_cols % kPiece != 0) return cudaErrorInvalidValue;
  const uint64_t rb = row_bytes(type_id, n_cols);
  const auto* bytes = static_cast<const uint8_t*>(w);
  const bool known = visit_block_type(type_id, [&](auto tag) {
    matvec_kernel<decltype(tag)::value>
        <<<blocks_for(n_rows, kRowsPerBlock), kRowsPerBlock * kWarp, 0, as_stream(stream)>>>(
            bytes, n_rows, n_cols, rb, x, static_cast<int>(n_tokens), y);
  });
  if (!known) return cudaErrorInvalidValue;
  return cudaGetLastError();
}

int dequantize_to_f16(uint32_t type_id, const void* w, int64_t n_rows, int64_t n_cols, void* out, void* stream) {
  if (n_cols % kPiece != 0) return cudaErrorInvalidValue;
  const uint64_t rb = row_bytes(type_id, n_cols);
  const auto* bytes = static_cast<const uint8_t*>(w);
  constexpr int kThreads = 256;
  const bool known = visit_block_type(type_id, [&](auto tag) {
    dequantize_f16_kernel<decltype(tag)::value>
        <<<blocks_for(n_rows * (n_cols / kPiece), kThreads), kThreads, 0, as_stream(stream)>>>(
            bytes, n_rows, n_cols, rb, static_cast<__half*>(out));
  });
  if (!known) return cudaErrorInvalidValue;
  return cudaGetLastError();
}

int convert_to_f16(const float* x, int64_t n, void* out, void* stream) {
  constexpr int kThreads = 256;
  convert_f16_kernel<<<blocks_for(n, kThreads), kThreads, 0, as_stream(stream)>>>(x, n, static_cast<__half*>(out));
  return cudaGetLastError();
}

// Row-major y [n_tokens][n_rows] is column-major Y^T = W * X^T: W row-major is column-major W^T (op T),
// X row-major is column-major X^T (op N).
int gemm_f16(void* blas, const void* w_f16, int64_t n_rows, int64_t n_cols, const void* x_f16, int64_t n_tokens,
             float* y, int64_t ldy) {
  const float one = 1.0f, zero = 0.0f;
  const cublasStatus_t s = cublasGemmEx(
      static_cast<cublasHandle_t>(blas), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n_rows), static_cast<int>(n_tokens),
      static_cast<int>(n_cols), &one, w_f16, CUDA_R_16F, static_cast<int>(n_cols), x_f16, CUDA_R_16F,
      static_cast<int>(n_cols), &zero, y, CUDA_R_32F, static_cast<int>(ldy), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  return blas_status_code(static_cast<int>(s));
}

int gemm_f32(void* blas, const float* w, int64_t n_rows, int64_t n_cols, const float* x, int64_t n_tokens, float* y,
             int64_t ldy) {
  const float one = 1.0f, zero = 0.0f;
  const cublasStatus_t s =
      cublasSgemm(static_cast<cublasHandle_t>(blas), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n_rows),
                  static_cast<int>(n_tokens), static_cast<int>(n_cols), &one, w, static_cast<int>(n_cols), x,
                  static_cast<int>(n_cols), &zero, y, static_cast<int>(ldy));
  return blas_status_code(static_cast<int>(s));
}

}  // namespace infertune::cuda
