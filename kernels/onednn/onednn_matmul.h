#pragma once
// oneDNN (libdnnl) as a GEMM backend for float weights (F32 / F16 / BF16) in prompt batches. Optional: built
// when CMake finds dnnl (kernels/onednn/onednn_matmul.cpp), otherwise a stub says "not built".
//
// A call computes rows [row_begin, row_end) of one problem on the calling thread, like a MatmulFn, with
// oneDNN limited to that one thread: the engine's pool threads each take their own rows, so oneDNN never
// adds threads of its own (-t / -tb stay the total). Weights are used in place where oneDNN can read them:
//   F32   f32 activations x f32 weights (the mmapped rows, a transposed-B descriptor; no copy)
//   BF16  activations rounded to bf16 (nearest even, as ggml pairs them) x bf16 weights in place
//   F16   oneDNN 2.x has no f16 matmul on CPUs without AVX512-FP16: activations rounded to f16 (ggml's
//         pairing), weights widened to f32 a block of rows at a time, f32 GEMM (f16 values are exact in f32)
// Results go to a dense per-thread buffer and are copied into the strided output rows.
#include <cstddef>
#include <optional>
#include <string>

#include "kernels/ggml_type.h"
#include "kernels/matmul/matmul.h"

namespace infertune {

// Whether this binary was built with oneDNN.
bool onednn_built();

// One line for --version and logs: "2.6.3 (cpu runtime omp, isa avx512_core_bf16)" or "not built".
std::string onednn_summary();

// Whether oneDNN computes problems of `type` on this CPU with an optimized implementation (probed once by
// creating a small primitive; a reference-only implementation counts as unsupported).
bool onednn_supports(GgmlType type);

// Rows [row_begin, row_end) of `problem` (which passed check_matmul_problem, of a type onednn_supports) on
// the calling thread. Concurrent calls on disjoint row ranges are safe. If oneDNN fails (it should not),
// the rows are computed by the registry's kernel instead and the failure is kept for
// take_onednn_failure(), so the answer is never missing.
void onednn_matmul(const MatmulProblem& problem, size_t row_begin, size_t row_end);

// The first failure message since the last call, if any (see onednn_matmul).
std::optional<std::string> take_onednn_failure();

}  // namespace infertune
