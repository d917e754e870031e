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

// Below this many tokens, weights in the interleaved layout are multiplied by the matrix-vector kernels: each group
// of 8 rows is unpacked once per pass of up to 4 tokens, from cache after the first. Below 24 tokens the tiled kernels
// waste much of their 16-token panels: at 8 tokens the passes took 0.40-0.77x the tiles' time, at 24 0.78-0.88x, at
// 32 1.06-1.35x (Q4_K, Q6_K, Q4_0, Q8_0, 8192 x 2048, one thread, Zen 4). The file layout turns at kMinPanelTokens.
inline constexpr size_t kInterleavedMatvecTokens = 25;

// Whether a product of n_tokens tokens with weights in `layout` runs on the matrix-vector kernels (else tiled). The
// engine splits the rows of the two kinds differently between threads.
constexpr bool runs_matrix_vector(WeightLayout layout, size_t n_tokens) {
  return n_tokens < (layout == WeightLayout::interleaved8 ? kInterleavedMatvecTokens : kMinPanelTokens);
}

// The shape checks every kernel relies on: a row length that is whole blocks of the type, weights of
// exactly n_rows rows, non-null activations and outputs, quantized activations (when given) of this x.
// Errors name the type and the sizes.
Status check_matmul_problem(const MatmulProblem& problem);

}  // namespace infertune
