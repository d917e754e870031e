#pragma once
// Host launcher of the piece-decoding kernel (kernels/cuda/block_decode_instantiate.cu): decodes a whole row
// on the device with kernels/cuda/block_decode.h, one thread per 32-value piece. It instantiates every
// decoder in device code, and GPU tests compare its output with the host decoders bit for bit.
// No CUDA header here, so plain C++ code can declare and call it.
#include <cstdint>

namespace infertune::cuda {

// Decodes pieces [0, n_pieces) of the row at row_device (device memory, type `type`, a ggml type id) into
// out_device[0 .. 32 * n_pieces) on `stream` (a cudaStream_t; nullptr for the default stream). Asynchronous.
// Returns a cudaError_t as int: cudaErrorInvalidValue for an unsupported type or a negative n_pieces, else
// the launch's error (cudaSuccess = 0).
int launch_decode_pieces(uint32_t type, const void* row_device, int64_t n_pieces, float* out_device, void* stream);

}  // namespace infertune::cuda
