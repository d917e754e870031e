#pragma once
// The matrix-vector kernels behind cuda::matvec (device_ops.h), for linear.cu and the timing helper: the
// fast kernels of the common weight types (matvec_fast.cu) and the generic one every type has (linear.cu).
// Plain C++: no CUDA header.
#include <cstdint>

namespace infertune::cuda {

// Whether matvec_fast takes this product: a type with a FastDecoder (matvec_fast_decode.h), weights at
// that decoder's alignment, activations 16-byte aligned, n_cols a multiple of the block.
bool matvec_fast_applies(uint32_t type_id, const void* w, int64_t n_cols, const float* x);
// As matvec; the caller checked matvec_fast_applies and 1 <= n_tokens <= kMatvecMaxTokens. Returns the launch's
// cudaError_t as int.
int matvec_fast(uint32_t type_id, const void* w, int64_t n_rows, int64_t n_cols, const float* x, int64_t n_tokens,
                float* y, void* stream);
// The one-warp-per-row kernel over decode_piece, for every supported type.
int matvec_generic(uint32_t type_id, const void* w, int64_t n_rows, int64_t n_cols, const float* x, int64_t n_tokens,
                   float* y, void* stream);

}  // namespace infertune::cuda
