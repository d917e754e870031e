#pragma once
// One matrix product against a weight tensor in its GGUF layout:
//   y[n_tokens][n_rows] = x[n_tokens][n_cols] * W^T,   W: n_rows rows of n_cols values of `type`.
// A kernel computes a range of weight rows for every token, so callers split the rows between threads.
//
// Integer kernels read x quantized to int8 (kernels/matmul/quantized_activations.h). A caller that runs
// several matmuls on one input, or splits one matmul between threads, quantizes x once into a
// QuantizedActivations and passes it as `xq`; without it every kernel call quantizes all of x itself.
#include <cstddef>
#include <span>
#include <string_view>

#include "kernels/ggml_type.h"
#include "kernels/matmul/interleaved_rows.h"
#include "kernels/matmul/quantized_activations.h"
#include "kernels/result.h"

namespace infertune {

struct MatmulProblem {
  GgmlType type = GgmlType::F32;
  std::span<const std::byte> weights;  // [n_rows][row_bytes], as stored in the file, or interleaved (`layout`)
  size_t n_rows = 0;
  size_t n_cols = 0;         // values per weight row = values per activation row
  const float* x = nullptr;  // [n_tokens][n_cols]
  size_t n_tokens = 0;
  float* y = nullptr;  // [n_tokens][n_rows]
  // x already quantized (quantize_all or prepare + quantize of this x); null: kernels quantize x themselves.
  // Used when it holds the format the weight type reads.
  const QuantizedActivations* xq = nullptr;
  WeightLayout layout = WeightLayout::rows;  // of `weights`
};

// Computes y[t][row] for every token t and row in [row_begin, row_end). Calls on disjoint row ranges of
// one problem may run concurrently. The problem has passed check_matmul_problem.
using MatmulFn = void (*)(const MatmulProblem& problem, size_t row_begin, size_t row_end);

struct MatmulKernel {
  GgmlType type = GgmlType::F32;
  std::string_view variant;  // "scalar", later "avx2", "avx512", ...
  MatmulFn fn = nullptr;
  bool reads_interleaved = false;  // also takes weights in WeightLayout::interleaved8
};

// The shape checks every kernel relies on: a row length that is whole blocks of the type, weights of
// exactly n_rows rows, non-null activations and outputs, quantized activations (when given) of this x.
// Errors name the type and the sizes.
Status check_matmul_problem(const MatmulProblem& problem);

}  // namespace infertune
