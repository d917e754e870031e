#pragma once
// Activation rows quantized to int8 for the integer dot-product kernels, in the layouts they read:
// 32-value blocks for the 32-value formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4), ggml's q8_K super-blocks
// (float scale, 256 codes, 16 group sums) for the K-quants and IQ4_XS. Each block has d = amax / 127 and
// codes round(x / d), so codes are symmetric in [-127, 127] (never -128) and kernels may negate them.
//
// These are the per-row building blocks; QuantizedActivations (quantized_activations.h) owns the buffers of
// a whole matmul input and adds the token-panel layout of the tiled kernels.
#include <cstddef>
#include <cstdint>

#include "kernels/ggml_type.h"
#include "kernels/half.h"
#include "kernels/quant/blocks_k.h"

namespace infertune {

// What a weight type's kernels read from the activations.
enum class ActivationFormat : uint8_t {
  f32,  // the float rows as given (float weight types, the scalar reference)
  q8,   // 32-value blocks (the 32-value formats)
  q8k,  // 256-value super-blocks (K-quants, IQ4_XS)
};
ActivationFormat activation_format(GgmlType weight_type);

// One 32-value-block row:  x: [n] floats, n a multiple of 32.  codes: [n] in value order (round(x * 127 / amax)),
// d: [n / 32] block scales amax / 127 rounded to the nearest f16, as ggml stores q8_0 / q8_1 activation scales (so
// the block products d_w * d_x are llama.cpp's bit for bit; the codes use the unrounded scale, as ggml's do),
// dsum: [n / 32] the block's offset sum for formats with a minimum (value = q * dw + m), which apply it once per
// block: q8_offset_sum below, q8_1's s as ggml stores it.
// isum (optional): [n / 32] the integer sums of the codes.
void quantize_row_q8(const float* x, size_t n, int8_t* codes, float* d, float* dsum, int32_t* isum = nullptr);

// q8_1's s: the unrounded scale times the sum of the codes, rounded to f16 (ggml's quantize_row_q8_1). Not the
// rounded d times the sum: Q4_1 and Q5_1 products differ from llama.cpp's by about 1% of the logits' spread
// with that one.
inline float q8_offset_sum(float unrounded_scale, int code_sum) {
  return f16_to_f32(f32_to_f16(unrounded_scale * static_cast<float>(code_sum)));
}

// One q8_K row:  x: [n] floats, n a multiple of 256.  out: [n / 256].
void quantize_row_q8k(const float* x, size_t n, kquant::BlockQ8K* out);

// The portable versions of the two (the ones above use AVX2 when the CPU has it, with the same results).
void quantize_row_q8_scalar(const float* x, size_t n, int8_t* codes, float* d, float* dsum, int32_t* isum = nullptr);
void quantize_row_q8k_scalar(const float* x, size_t n, kquant::BlockQ8K* out);

// The q8 matvec kernels read codes pair-interleaved: blocks 2p and 2p + 1 as
//   [first 16 codes of 2p][first 16 of 2p + 1][last 16 of 2p][last 16 of 2p + 1]
// so one 256-bit vector of a nibble format's low (high) halves of two weight blocks lines up with one
// activation vector. An odd last block stays in value order.  natural, paired: [n], n a multiple of 32.
void pair_interleave_q8(const int8_t* natural, size_t n, int8_t* paired);

}  // namespace infertune
