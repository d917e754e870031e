// The small per-token kernels of a transformer block on the GPU: RMSNorm, residual and bias adds, SwiGLU,
// GELU-gating, rope with host-computed angles, row gathers and the logits' soft cap.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/cuda/device_ops.h"

namespace infertune::cuda {
namespace {

constexpr int kThreads = 256;

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
unsigned blocks_for(int64_t n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

// Sum over the block (kThreads threads); every thread gets the result.
__device__ float block_sum(float v) {
  __shared__ float partial[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.0f;
  for (int i = 0; i < kThreads / 32; ++i) total += partial[i];
  __syncthreads();  // partial may be reused by the next call
  return total;
}

// One block per row. The sum of squares in double per thread, as the CPU reference accumulates in double,
// so long rows round alike.
__global__ void rms_norm_kernel(const float* x, const float* gain, float eps, int64_t width, float* out) {
  const float* row = x + blockIdx.x * width;
  float* dst = out + blockIdx.x * width;
  double squares = 0.0;
  for (int64_t i = threadIdx.x; i < width; i += kThreads) squares += static_cast<double>(row[i]) * row[i];
  const float sum = block_sum(static_cast<float>(squares));
  const float scale = 1.0f / sqrtf(sum / static_cast<float>(width) + eps);
  for (int64_t i = threadIdx.x; i < width; i += kThreads) dst[i] = row[i] * scale * gain[i];
}

__global__ void add_kernel(float* x, const float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) x[i] += y[i];
}

__global__ void add_bias_kernel(float* x, const float* bias, int64_t n, int64_t width) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) x[i] += bias[i % width];
}

__global__ void silu_mul_kernel(const float* gate, const float* up, int64_t n, float* out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) {
    const float g = gate[i];
    out[i] = g / (1.0f + expf(-g)) * up[i];
  }
}

// GELU as the CPU's kernels/ops/gelu.cpp evaluates it (ggml's CPU table): the input rounded to half precision,
// the tanh approximation in float, the result rounded to half precision; 0 up to -10 and x from 10 on.
__device__ float gelu_as_the_cpu(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kCubicCoefficient = 0.044715f;
  if (x <= -10.0f) return 0.0f;
  if (x >= 10.0f) return x;
  const float h = __half2float(__float2half_rn(x));
  const float g = 0.5f * h * (1.0f + tanhf(kSqrt2OverPi * h * (1.0f + kCubicCoefficient * h * h)));
  return __half2float(__float2half_rn(g));
}

__global__ void gelu_mul_kernel(const float* gate, const float* up, int64_t n, float* out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) out[i] = gelu_as_the_cpu(gate[i]) * up[i];
}

__global__ void soft_cap_kernel(float* x, int64_t n, float cap) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) x[i] = cap * tanhf(x[i] * (1.0f / cap));  // as the CPU computes it
}

// One thread per rotated pair of one head of one token.
__global__ void rope_kernel(float* x, int64_t n_tokens, int n_heads, int head_dim, int n_rot, bool neox,
                            const float* cos, const float* sin) {
  const int half = n_rot / 2;
  const int64_t g = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (g >= n_tokens * n_heads * half) return;
  const int i = static_cast<int>(g % half);
  const int64_t head = g / half;  // token * n_heads + h
  const int64_t t = head / n_heads;
  float* h = x + head * head_dim;
  const int a = neox ? i : 2 * i;
  const int b = neox ? i + half : 2 * i + 1;
  const float c = cos[t * half + i];
  const float s = sin[t * half + i];
  const float x0 = h[a];
  const float x1 = h[b];
  h[a] = x0 * c - x1 * s;
  h[b] = x0 * s + x1 * c;
}

__global__ void gather_rows_kernel(const float* x, const uint32_t* rows, int64_t n_out, int64_t width, float* out) {
  const int64_t g = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (g >= n_out * width) return;
  const int64_t r = g / width;
  out[g] = x[static_cast<int64_t>(rows[r]) * width + g % width];
}

}  // namespace

int rms_norm(const float* x, const float* gain, float eps, int64_t n_rows, int64_t width, float* out, void* stream) {
  if (n_rows == 0) return 0;
  rms_norm_kernel<<<static_cast<unsigned>(n_rows), kThreads, 0, as_stream(stream)>>>(x, gain, eps, width, out);
  return cudaGetLastError();
}

int add(float* x, const float* y, int64_t n, void* stream) {
  if (n == 0) return 0;
  add_kernel<<<blocks_for(n, kThreads), kThreads, 0, as_stream(stream)>>>(x, y, n);
  return cudaGetLastError();
}

int add_bias(float* x, const float* bias, int64_t n_rows, int64_t width, void* stream) {
  const int64_t n = n_rows * width;
  if (n == 0) return 0;
  add_bias_kernel<<<blocks_for(n, kThreads), kThreads, 0, as_stream(stream)>>>(x, bias, n, width);
  return cudaGetLastError();
}

int silu_mul(const float* gate, const float* up, int64_t n, float* out, void* stream) {
  if (n == 0) return 0;
  silu_mul_kernel<<<blocks_for(n, kThreads), kThreads, 0, as_stream(stream)>>>(gate, up, n, out);
  return cudaGetLastError();
}

int gelu_mul(const float* gate, const float* up, int64_t n, float* out, void* stream) {
  if (n == 0) return 0;
  gelu_mul_kernel<<<blocks_for(n, kThreads), kThreads, 0, as_stream(stream)>>>(gate, up, n, out);
  return cudaGetLastError();
}

int soft_cap(float* x, int64_t n, float cap, void* stream) {
  if (n == 0) return 0;
  soft_cap_kernel<<<blocks_for(n, kThreads), kThreads, 0, as_stream(stream)>>>(x, n, cap);
  return cudaGetLastError();
}

int rope(float* x, int64_t n_tokens, int n_heads, int head_dim, int n_rot, bool neox, const float* cos,
         const float* sin, void* stream) {
  const int64_t n = n_tokens * n_heads * (n_rot / 2);
  if (n == 0) return 0;
  rope_kernel<<<blocks_for(n, kThreads), kThreads, 0, as_stream(stream)>>>(x, n_tokens, n_heads, head_dim, n_rot, neox,
                                                                           cos, sin);
  return cudaGetLastError();
}

int gather_rows(const float* x, const uint32_t* rows, int64_t n_out, int64_t width, float* out, void* stream) {
  const int64_t n = n_out * width;
  if (n == 0) return 0;
  gather_rows_kernel<<<blocks_for(n, kThreads), kThreads, 0, as_stream(stream)>>>(x, rows, n_out, width, out);
  return cudaGetLastError();
}

}  // namespace infertune::cuda
