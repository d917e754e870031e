#include "kernels/matmul/activation_quant.h"

#include <cmath>
#include <vector>

namespace infertune {
namespace {

// Largest |x[i]| of a block.
float abs_max(const float* x, size_t n) {
  float m = 0;
  for (size_t i = 0; i < n; ++i) m = std::fmax(m, std::fabs(x[i]));
  return m;
}

// Rounds x[i] / d to the nearest code (|code| <= 127 since d = amax / 127); returns the sum of codes.
int quantize_codes(const float* x, size_t n, float d, int8_t* qs) {
  const float inv = d != 0 ? 1.0f / d : 0.0f;
  int sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const int q = static_cast<int>(std::nearbyint(x[i] * inv));
    qs[i] = static_cast<int8_t>(q > 127 ? 127 : (q < -127 ? -127 : q));
    sum += qs[i];
  }
  return sum;
}

}  // namespace

void quantize_activations_q8(const float* x, size_t n, ActBlockQ8* out) {
  for (size_t b = 0; b < n / 32; ++b) {
    const float* xb = x + 32 * b;
    const float d = abs_max(xb, 32) / 127.0f;
    const int sum = quantize_codes(xb, 32, d, out[b].qs);
    out[b].d = d;
    out[b].dsum = d * static_cast<float>(sum);
  }
}

void quantize_activations_q8k(const float* x, size_t n, kquant::BlockQ8K* out) {
  for (size_t b = 0; b < n / kquant::kSuperBlock; ++b) {
    const float* xb = x + kquant::kSuperBlock * b;
    const float d = abs_max(xb, kquant::kSuperBlock) / 127.0f;
    kquant::BlockQ8K& y = out[b];
    y.d = d;
    for (int g = 0; g < kquant::kSuperBlock / 16; ++g) {
      y.bsums[g] = static_cast<int16_t>(quantize_codes(xb + 16 * g, 16, d, y.qs + 16 * g));
    }
  }
}

const ActBlockQ8* quantize_activation_rows_q8(const float* x, size_t n_tokens, size_t n_cols) {
  thread_local std::vector<ActBlockQ8> buffer;
  const size_t per_row = n_cols / 32;
  buffer.resize(n_tokens * per_row);
  for (size_t t = 0; t < n_tokens; ++t) quantize_activations_q8(x + t * n_cols, n_cols, buffer.data() + t * per_row);
  return buffer.data();
}

const kquant::BlockQ8K* quantize_activation_rows_q8k(const float* x, size_t n_tokens, size_t n_cols) {
  thread_local std::vector<kquant::BlockQ8K> buffer;
  const size_t per_row = n_cols / kquant::kSuperBlock;
  buffer.resize(n_tokens * per_row);
  for (size_t t = 0; t < n_tokens; ++t) quantize_activations_q8k(x + t * n_cols, n_cols, buffer.data() + t * per_row);
  return buffer.data();
}

}  // namespace infertune
