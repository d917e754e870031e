#pragma once
// The element conversions the oneDNN backend runs per call, vectorized with AVX2 + F16C (in their own
// translation unit, kernels/onednn/onednn_convert_x86.cpp). Callers check onednn_conversions_available().
// Roundings are ggml's: nearest even, NaN kept NaN (bit for bit the scalar ones of kernels/half.h).
#include <cstddef>
#include <cstdint>

namespace infertune {

// Whether this CPU runs the conversions below (AVX2 and F16C).
bool onednn_conversions_available();

// out[i] = the bf16 bits of x[i] rounded to nearest even.   x: [n]  out: [n]
void round_to_bf16_bits(const float* x, size_t n, uint16_t* out);

// out[i] = x[i] rounded to f16 and widened back to f32.     x: [n]  out: [n]
void round_to_f16_values(const float* x, size_t n, float* out);

// out[i] = the f16 value stored at w[2i .. 2i+1] as f32.    w: [2n] bytes, any alignment  out: [n]
void widen_f16(const uint8_t* w, size_t n, float* out);

}  // namespace infertune
