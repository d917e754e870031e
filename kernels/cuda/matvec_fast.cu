// The matrix-vector product for the weight types real models use most (Q4_K, Q5_K, Q6_K, Q4_0, Q8_0, F16),
// near the memory bandwidth for one token: the weights are read once, with aligned word loads, decoded in
// registers (matvec_fast_decode.h) and dotted with every token's activations.
//
// A warp takes kRowsPerWarp rows; lane l decodes chunks l, l + 32, ... of each (a chunk: 32 values of a
// block, or 8 for Q8_0; consecutive lanes read consecutive chunks, so a warp's loads cover a contiguous
// span) and loads each chunk's activations once for all its rows. The activations are the same for every
// warp and stay in L1/L2; the weights stream from memory once.
#include <cuda_runtime.h>

#include "kernels/cuda/device_ops.h"
#include "kernels/cuda/matvec_fast.h"
#include "kernels/cuda/matvec_fast_decode.h"

namespace infertune::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 4;
constexpr int kRowsPerWarp = 2;  // each chunk's activations are loaded once for two rows

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

//   w: [n_rows][row_bytes]   x: [kTokens][n_cols]   y: [kTokens][n_rows]
template <BlockType T, int kTokens>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp)
    matvec_fast_kernel(const uint8_t* __restrict__ w, int64_t n_rows, int64_t n_cols, uint64_t row_bytes,
                       const float* __restrict__ x, float* __restrict__ y) {
  using D = FastDecoder<T>;
  constexpr int kRunValues = D::kValues / D::kRuns;
  const int lane = threadIdx.x % kWarp;
  const int64_t row0 = (static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp) * kRowsPerWarp;
  if (row0 >= n_rows) return;
  const uint8_t* rows[kRowsPerWarp];  // a row past the end repeats the last one; its sums are not written
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) rows[r] = w + min(row0 + r, n_rows - 1) * row_bytes;

  const int n_chunks = static_cast<int>(n_cols / D::kBlockValues) * D::kChunks;
  float acc[kRowsPerWarp][kTokens] = {};
  for (int c = lane; c < n_chunks; c += kWarp) {
    const int block = c / D::kChunks, chunk = c % D::kChunks;
    float v[kRowsPerWarp][D::kValues];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r)
      D::decode(rows[r] + static_cast<int64_t>(block) * D::kBlockBytes, chunk, v[r]);
    const float* xc = x + static_cast<int64_t>(block) * D::kBlockValues;
#pragma unroll
    for (int t = 0; t < kTokens; ++t) {
      float s[kRowsPerWarp] = {};
#pragma unroll
      for (int run = 0; run < D::kRuns; ++run) {
        const float4* x4 = reinterpret_cast<const float4*>(xc + t * n_cols + D::run_column(chunk, run));
#pragma unroll
        for (int q = 0; q < kRunValues / 4; ++q) {
          const float4 xv = __ldg(x4 + q);
#pragma unroll
          for (int r = 0; r < kRowsPerWarp; ++r) {
            const float* vr = v[r] + run * kRunValues + 4 * q;
            s[r] = fmaf(vr[0], xv.x, s[r]);
            s[r] = fmaf(vr[1], xv.y, s[r]);
            s[r] = fmaf(vr[2], xv.z, s[r]);
            s[r] = fmaf(vr[3], xv.w, s[r]);
          }
        }
      }
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) acc[r][t] += s[r];
    }
  }
#pragma unroll
  for (int t = 0; t < kTokens; ++t) {
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const float sum = warp_sum(acc[r][t]);
      if (lane == 0 && row0 + r < n_rows) y[t * n_rows + row0 + r] = sum;
    }
  }
}

template <BlockType T, int kTokens>
void launch(const uint8_t* w, int64_t n_rows, int64_t n_cols, const float* x, float* y, cudaStream_t stream) {
  constexpr int64_t kRowsPerBlock = kWarpsPerBlock * kRowsPerWarp;
  const auto blocks = static_cast<unsigned>((n_rows + kRowsPerBlock - 1) / kRowsPerBlock);
  const uint64_t row_bytes = static_cast<uint64_t>(n_cols / FastDecoder<T>::kBlockValues) * FastDecoder<T>::kBlockBytes;
  matvec_fast_kernel<T, kTokens><<<blocks, kWarpsPerBlock * kWarp, 0, stream>>>(w, n_rows, n_cols, row_bytes, x, y);
}

template <BlockType T>
void launch_tokens(const uint8_t* w, int64_t n_rows, int64_t n_cols, const float* x, int64_t n_tokens, float* y,
                   cudaStream_t stream) {
  static_assert(kMatvecMaxTokens == 8, "one instantiation per token count");
  switch (n_tokens) {
    case 1:
      return launch<T, 1>(w, n_rows, n_cols, x, y, stream);
    case 2:
      return launch<T, 2>(w, n_rows, n_cols, x, y, stream);
    case 3:
      return launch<T, 3>(w, n_rows, n_cols, x, y, stream);
    case 4:
      return launch<T, 4>(w, n_rows, n_cols, x, y, stream);
    case 5:
      return launch<T, 5>(w, n_rows, n_cols, x, y, stream);
    case 6:
      return launch<T, 6>(w, n_rows, n_cols, x, y, stream);
    case 7:
      return launch<T, 7>(w, n_rows, n_cols, x, y, stream);
    default:
      return launch<T, 8>(w, n_rows, n_cols, x, y, stream);
  }
}

template <BlockType T>
bool applies(const void* w, int64_t n_cols) {
  using D = FastDecoder<T>;
  return reinterpret_cast<uintptr_t>(w) % D::kAlignment == 0 && n_cols % D::kBlockValues == 0 &&
         (n_cols / D::kBlockValues) * D::kChunks < (int64_t{1} << 30);
}

}  // namespace

bool matvec_fast_applies(uint32_t type_id, const void* w, int64_t n_cols, const float* x) {
  if (reinterpret_cast<uintptr_t>(x) % 16 != 0 || n_cols <= 0) return false;
  switch (static_cast<BlockType>(type_id)) {
    case BlockType::Q4_K:
      return applies<BlockType::Q4_K>(w, n_cols);
    case BlockType::Q5_K:
      return applies<BlockType::Q5_K>(w, n_cols);
    case BlockType::Q6_K:
      return applies<BlockType::Q6_K>(w, n_cols);
    case BlockType::Q4_0:
      return applies<BlockType::Q4_0>(w, n_cols);
    case BlockType::Q8_0:
      return applies<BlockType::Q8_0>(w, n_cols);
    case BlockType::F16:
      return applies<BlockType::F16>(w, n_cols);
    default:
      return false;
  }
}

int matvec_fast(uint32_t type_id, const void* w, int64_t n_rows, int64_t n_cols, const float* x, int64_t n_tokens,
                float* y, void* stream) {
  if (n_rows <= 0) return cudaSuccess;
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto s = static_cast<cudaStream_t>(stream);
  switch (static_cast<BlockType>(type_id)) {
    case BlockType::Q4_K:
      launch_tokens<BlockType::Q4_K>(wb, n_rows, n_cols, x, n_tokens, y, s);
      break;
    case BlockType::Q5_K:
      launch_tokens<BlockType::Q5_K>(wb, n_rows, n_cols, x, n_tokens, y, s);
      break;
    case BlockType::Q6_K:
      launch_tokens<BlockType::Q6_K>(wb, n_rows, n_cols, x, n_tokens, y, s);
      break;
    case BlockType::Q4_0:
      launch_tokens<BlockType::Q4_0>(wb, n_rows, n_cols, x, n_tokens, y, s);
      break;
    case BlockType::Q8_0:
      launch_tokens<BlockType::Q8_0>(wb, n_rows, n_cols, x, n_tokens, y, s);
      break;
    case BlockType::F16:
      launch_tokens<BlockType::F16>(wb, n_rows, n_cols, x, n_tokens, y, s);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace infertune::cuda
