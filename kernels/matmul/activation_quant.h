#pragma once
// Activation rows quantized to int8 once per matmul call, in the layout the integer dot-product kernels
// pair each weight type with: 32-value blocks for the 32-value formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// IQ4_NL), ggml's q8_K super-blocks (float scale, 256 codes, 16 group sums) for the K-quants and IQ4_XS.
// Codes are symmetric in [-127, 127] (never -128), so kernels may negate them freely.
#include <cstddef>
#include <cstdint>

#include "kernels/quant/blocks_k.h"

namespace infertune {

// value[i] = d * qs[i]; dsum = d * sum(qs), so offset formats (value = q * dw + m, or (q - 8) * dw) apply
// their offset once per block.
struct ActBlockQ8 {
  float d;
  float dsum;
  int8_t qs[32];
};
static_assert(sizeof(ActBlockQ8) == 40);

//   x: [n] floats, n a multiple of 32   out: [n / 32]
void quantize_activations_q8(const float* x, size_t n, ActBlockQ8* out);

//   x: [n] floats, n a multiple of 256   out: [n / 256]
void quantize_activations_q8k(const float* x, size_t n, kquant::BlockQ8K* out);

// All n_tokens rows of x ([n_tokens][n_cols]) quantized into a buffer owned by the calling thread, valid
// until that thread's next call of the same function: [n_tokens][n_cols / 32] resp. [n_tokens][n_cols / 256].
const ActBlockQ8* quantize_activation_rows_q8(const float* x, size_t n_tokens, size_t n_cols);
const kquant::BlockQ8K* quantize_activation_rows_q8k(const float* x, size_t n_tokens, size_t n_cols);

}  // namespace infertune
