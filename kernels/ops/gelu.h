#pragma once
// GELU, the tanh approximation gemma's feed-forward gates with:
//   gelu(x) = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
// gelu_mul evaluates it as ggml's CPU backend does, so that logits follow llama.cpp's: the input rounded to
// half precision and looked up in a table of half-precision results, x itself from 10 on and 0 up to -10.
#include <cstdint>
#include <span>

namespace infertune {

// The exact (float) tanh approximation; the reference gelu_mul's table is built from.
float gelu(float x);

// Inputs at or below kGeluTableLow give 0, at or above kGeluTableHigh give x; between, the table's entry.
inline constexpr float kGeluTableLow = -10.0f;
inline constexpr float kGeluTableHigh = 10.0f;

// gelu of every half-precision value (indexed by its bits), rounded to half precision: 65536 entries and a zero
// after them, so that a SIMD gather of 4 bytes at the last entry stays inside. Built on first use.
const uint16_t* gelu_f16_table();

// gelu_mul's reference loop (the scalar ops variant, and the tail of the SIMD ones).
void gelu_mul_reference(const float* gate, const float* up, size_t n, float* out);

// out[i] = gelu(gate[i]) * up[i] through the half-precision table, by the ops variant in use (ops_kernels.h); gate,
// up, out: [n]. out may alias gate or up.
void gelu_mul(std::span<const float> gate, std::span<const float> up, std::span<float> out);

}  // namespace infertune
