#include "kernels/matmul/scalar_matmul.h"

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/half.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

constexpr GgmlType kScalarTypes[] = {
    GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,   GgmlType::Q4_1,   GgmlType::Q5_0,
    GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q2_K,   GgmlType::Q3_K,   GgmlType::Q4_K,
    GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q8_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::MXFP4,
};

// The activations the weights meet, as ggml pairs them (its vec_dot_type): rounded to f16 for F16 weights
// and to bf16 for BF16 weights (products of two such values are exact), as they are for every other type.
// Rounded copies live in a per-thread buffer: [n_tokens][n_cols].
const float* paired_activations(const MatmulProblem& p) {
  if (p.type != GgmlType::F16 && p.type != GgmlType::BF16) return p.x;
  thread_local std::vector<float> rounded;
  rounded.resize(p.n_tokens * p.n_cols);
  for (size_t i = 0; i < rounded.size(); ++i) {
    rounded[i] = p.type == GgmlType::F16 ? f16_to_f32(f32_to_f16(p.x[i])) : bf16_to_f32(f32_to_bf16(p.x[i]));
  }
  return rounded.data();
}

void scalar_matmul(const MatmulProblem& p, size_t row_begin, size_t row_end) {
  if (row_begin >= row_end) return;
  const float* x = paired_activations(p);
  // One decoded weight row per thread, reused across calls (grows to the widest row seen).
  thread_local std::vector<float> row;
  row.resize(p.n_cols);
  const size_t row_bytes = p.weights.size() / p.n_rows;
  for (size_t r = row_begin; r < row_end; ++r) {
    const std::byte* stored = p.weights.data() + r * row_bytes;
    const float* weights = row.data();
    // F32 rows are used in place when aligned (GGUF aligns tensor data; a caller's buffer might not be).
    if (p.type == GgmlType::F32 && reinterpret_cast<uintptr_t>(stored) % alignof(float) == 0) {
      weights = reinterpret_cast<const float*>(stored);
    } else {
      [[maybe_unused]] const Status decoded =
          dequantize_row(p.type, p.weights.subspan(r * row_bytes, row_bytes), std::span<float>(row));
      assert(decoded.ok());  // check_matmul_problem has validated the shape
    }
    for (size_t t = 0; t < p.n_tokens; ++t) {
      p.y[t * p.n_rows + r] = static_cast<float>(dot_f32_double(x + t * p.n_cols, weights, p.n_cols));
    }
  }
}

std::vector<MatmulKernel> scalar_kernels() {
  std::vector<MatmulKernel> kernels;
  for (GgmlType type : kScalarTypes) {
    if (has_reference_codec(type)) kernels.push_back({type, "scalar", scalar_matmul});
  }
  return kernels;
}

}  // namespace

double dot_f32_double(const float* a, const float* b, size_t n) {
  // Four independent partial sums: the same fixed order every call, and room for the compiler to overlap
  // the additions.
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += static_cast<double>(a[i]) * b[i];
    s1 += static_cast<double>(a[i + 1]) * b[i + 1];
    s2 += static_cast<double>(a[i + 2]) * b[i + 2];
    s3 += static_cast<double>(a[i + 3]) * b[i + 3];
  }
  for (; i < n; ++i) s0 += static_cast<double>(a[i]) * b[i];
  return (s0 + s1) + (s2 + s3);
}

MatmulVariant scalar_matmul_variant() {
  return {"scalar", 0, [] { return true; }, scalar_kernels};
}

}  // namespace infertune
