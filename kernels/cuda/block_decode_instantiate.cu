// The piece-decoding kernel: every decode_piece<T> of kernels/cuda/block_decode.h compiled for the device,
// one thread per 32-value piece. It is the device side of the bit-exactness tests and the smallest kernel
// that shows how the matrix-vector and dequantize kernels use the decoders.
#include <cuda_runtime.h>

#include "kernels/cuda/block_decode.h"
#include "kernels/cuda/block_decode_kernel.h"

namespace infertune::cuda {
namespace {

constexpr int kThreadsPerBlock = 128;

//   row: [row_bytes(type, 32 * n_pieces)]   out: [n_pieces][32]
__global__ void decode_pieces_kernel(uint32_t type, const uint8_t* row, int64_t n_pieces, float* out) {
  const int64_t piece = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (piece >= n_pieces) return;
  float values[kPieceValues];  // decoded in registers, as the real kernels do, then stored
  if (!decode_piece_any(type, row, piece, values)) return;
  for (int j = 0; j < kPieceValues; ++j) out[piece * kPieceValues + j] = values[j];
}

}  // namespace

int launch_decode_pieces(uint32_t type, const void* row_device, int64_t n_pieces, float* out_device, void* stream) {
  if (!supported(type) || n_pieces < 0) return static_cast<int>(cudaErrorInvalidValue);
  if (n_pieces == 0) return static_cast<int>(cudaSuccess);
  const int64_t blocks = (n_pieces + kThreadsPerBlock - 1) / kThreadsPerBlock;
  if (blocks > 0x7fffffff) return static_cast<int>(cudaErrorInvalidValue);  // beyond gridDim.x
  decode_pieces_kernel<<<static_cast<unsigned>(blocks), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      type, static_cast<const uint8_t*>(row_device), n_pieces, out_device);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace infertune::cuda
