#pragma once
// GELU, the tanh approximation gemma's feed-forward gates with:
//   gelu(x) = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
// gelu_mul evaluates it as ggml's CPU backend does, so that logits follow llama.cpp's: the input rounded to
// half precision and looked up in a table of half-precision results, x itself from 10 on and 0 up to -10.
#include <span>

namespace infertune {

// The exact (float) tanh approximation; the reference gelu_mul's table is built from.
float gelu(float x);

// out[i] = gelu(gate[i]) * up[i] through the half-precision table; gate, up, out: [n]. out may alias gate
// or up.
void gelu_mul(std::span<const float> gate, std::span<const float> up, std::span<float> out);

}  // namespace infertune
