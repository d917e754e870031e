#pragma once
// Per-type reference codecs behind kernels/quant.h. Each pair lives in its own file (kernels/quant/TYPE.cpp).
// Preconditions (checked by the dispatcher in kernels/quant.cpp, not here): n is a multiple of the type's
// block size, src/dst hold exactly the row.
#include <cstdint>

namespace infertune::codecs {

using QuantizeFn = void (*)(const float* src, void* dst, int64_t n);
using DequantizeFn = void (*)(const void* src, float* dst, int64_t n);
// Importance-weighted encoders: ggml's quantize_TYPE with a non-null importance matrix. n is one whole row
// (some weight values by the row's mean square) and importance holds the row's n column weights.
using WeightedQuantizeFn = void (*)(const float* src, void* dst, int64_t n, const float* importance);

// Plain float types.
void quantize_f32(const float* src, void* dst, int64_t n);
void dequantize_f32(const void* src, float* dst, int64_t n);
void quantize_f16(const float* src, void* dst, int64_t n);
void dequantize_f16(const void* src, float* dst, int64_t n);
void quantize_bf16(const float* src, void* dst, int64_t n);
void dequantize_bf16(const void* src, float* dst, int64_t n);

// 32-element blocks.
void quantize_q4_0(const float* src, void* dst, int64_t n);
void dequantize_q4_0(const void* src, float* dst, int64_t n);
void quantize_q4_1(const float* src, void* dst, int64_t n);
void dequantize_q4_1(const void* src, float* dst, int64_t n);
void quantize_q5_0(const float* src, void* dst, int64_t n);
void dequantize_q5_0(const void* src, float* dst, int64_t n);
void quantize_q5_1(const float* src, void* dst, int64_t n);
void dequantize_q5_1(const void* src, float* dst, int64_t n);
void quantize_q8_0(const float* src, void* dst, int64_t n);
void dequantize_q8_0(const void* src, float* dst, int64_t n);
void quantize_q8_1(const float* src, void* dst, int64_t n);
void dequantize_q8_1(const void* src, float* dst, int64_t n);
void quantize_iq4_nl(const float* src, void* dst, int64_t n);
void dequantize_iq4_nl(const void* src, float* dst, int64_t n);
void quantize_mxfp4(const float* src, void* dst, int64_t n);
void dequantize_mxfp4(const void* src, float* dst, int64_t n);

// 256-element super-blocks.
void quantize_q2_K(const float* src, void* dst, int64_t n);
void dequantize_q2_K(const void* src, float* dst, int64_t n);
void quantize_q3_K(const float* src, void* dst, int64_t n);
void dequantize_q3_K(const void* src, float* dst, int64_t n);
void quantize_q4_K(const float* src, void* dst, int64_t n);
void dequantize_q4_K(const void* src, float* dst, int64_t n);
void quantize_q5_K(const float* src, void* dst, int64_t n);
void dequantize_q5_K(const void* src, float* dst, int64_t n);
void quantize_q6_K(const float* src, void* dst, int64_t n);
void dequantize_q6_K(const void* src, float* dst, int64_t n);
void quantize_q8_K(const float* src, void* dst, int64_t n);
void dequantize_q8_K(const void* src, float* dst, int64_t n);
void quantize_iq4_xs(const float* src, void* dst, int64_t n);
void dequantize_iq4_xs(const void* src, float* dst, int64_t n);

// Importance-weighted encoders (each beside its type's codecs in kernels/quant/TYPE.cpp).
void quantize_q4_0_weighted(const float* src, void* dst, int64_t n, const float* importance);
void quantize_q4_1_weighted(const float* src, void* dst, int64_t n, const float* importance);
void quantize_q5_0_weighted(const float* src, void* dst, int64_t n, const float* importance);
void quantize_q5_1_weighted(const float* src, void* dst, int64_t n, const float* importance);
void quantize_iq4_nl_weighted(const float* src, void* dst, int64_t n, const float* importance);
void quantize_q2_K_weighted(const float* src, void* dst, int64_t n, const float* importance);
void quantize_q3_K_weighted(const float* src, void* dst, int64_t n, const float* importance);
void quantize_q4_K_weighted(const float* src, void* dst, int64_t n, const float* importance);
void quantize_q5_K_weighted(const float* src, void* dst, int64_t n, const float* importance);
void quantize_q6_K_weighted(const float* src, void* dst, int64_t n, const float* importance);
void quantize_iq4_xs_weighted(const float* src, void* dst, int64_t n, const float* importance);

}  // namespace infertune::codecs
