#include "kernels/ops/scalar_ops.h"

#include <cmath>
#include <limits>

#include "kernels/ops/elementwise.h"
#include "kernels/ops/gelu.h"

namespace infertune {
namespace {

void rms_norm_ref(const float* x, const float* gain, float eps, size_t n, float* out) {
  double sum_squares = 0;
  for (size_t i = 0; i < n; ++i) sum_squares += static_cast<double>(x[i]) * x[i];
  const float mean = static_cast<float>(sum_squares / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  // Scale first, then the gain: the two roundings ggml makes (normalize, then a separate multiply).
  for (size_t i = 0; i < n; ++i) out[i] = (x[i] * scale) * gain[i];
}

void rope_rotate_ref(float* head, const float* cos, const float* sin, size_t n_pairs, bool neox) {
  // The two members of pair i sit `gap` apart, starting at a(i).
  const size_t gap = neox ? n_pairs : 1;
  for (size_t i = 0; i < n_pairs; ++i) {
    const size_t a = neox ? i : 2 * i;
    const float x0 = head[a];
    const float x1 = head[a + gap];
    head[a] = x0 * cos[i] - x1 * sin[i];
    head[a + gap] = x0 * sin[i] + x1 * cos[i];
  }
}

void softmax_ref(float* x, size_t n) {
  float max = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < n; ++i) max = std::fmax(max, x[i]);
  if (max == -std::numeric_limits<float>::infinity()) {
    for (size_t i = 0; i < n; ++i) x[i] = 0;
    return;
  }
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const float inverse = static_cast<float>(1.0 / sum);
  for (size_t i = 0; i < n; ++i) x[i] *= inverse;
}

void silu_mul_ref(const float* gate, const float* up, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i) out[i] = silu(gate[i]) * up[i];
}

void add_ref(float* x, const float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] += y[i];
}

DequantRowFn no_dequant(GgmlType) { return nullptr; }

constexpr OpsKernels kScalar{"scalar",     rms_norm_ref, rope_rotate_ref,    softmax_ref,
                             silu_mul_ref, add_ref,      gelu_mul_reference, no_dequant};

}  // namespace

const OpsKernels& scalar_ops_kernels() { return kScalar; }

OpsVariant scalar_ops_variant() { return {"scalar", 0, nullptr, scalar_ops_kernels}; }

}  // namespace infertune
