#pragma once
// Which implementation runs the small per-token ops (RMSNorm, rope, softmax, SwiGLU, residual add, embedding
// row decoding). Each compiled variant (the scalar reference in kernels/ops/scalar_ops.cpp, SIMD ones in
// their own translation units under kernels/ops/<isa>/) supplies one table of kernels; the best variant the
// CPU runs is chosen once at start-up. INFERTUNE_KERNEL=<name> forces the ops variant whose name is a prefix
// of <name> ("scalar", "avx2", "avx512" — so "avx512vnni", a matmul variant's name, selects "avx512"), and
// falls back to the best one when none matches. INFERTUNE_OPS_KERNEL=<name>, when set, does the same for the
// ops alone (the matmul variant stays as INFERTUNE_KERNEL says).
//
// The public ops (rms_norm, rope_rotate, softmax, silu_mul, gelu_mul, add_in_place, embedding_row) call through this
// table; tests and benchmarks use the tables directly to compare variants.
#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/ggml_type.h"

namespace infertune {

// Decodes n values (a whole number of the type's blocks) from src (no alignment promise) into dst.
using DequantRowFn = void (*)(const std::byte* src, float* dst, size_t n);

// One variant's kernels. Every pointer is set; all sizes are element counts and any size (odd, zero) and
// any float alignment is accepted. Outputs may alias inputs exactly where the public op allows it.
struct OpsKernels {
  std::string_view variant;
  // x, gain, out: [n]; out may alias x. out = x / sqrt(mean(x^2) + eps) * gain, sum of squares in double.
  void (*rms_norm)(const float* x, const float* gain, float eps, size_t n, float* out);
  // head: rotated pairs; cos, sin: [n_pairs]. Interleaved: pair i = (2i, 2i+1); NEOX: (i, i + n_pairs).
  void (*rope_rotate)(float* head, const float* cos, const float* sin, size_t n_pairs, bool neox);
  // x: [n] in place; -inf entries become 0, an all -inf row all zeros; the sum is accumulated in double.
  void (*softmax)(float* x, size_t n);
  // gate, up, out: [n]; out[i] = silu(gate[i]) * up[i]; out may alias gate or up.
  void (*silu_mul)(const float* gate, const float* up, size_t n, float* out);
  // x, y: [n]; x[i] += y[i].
  void (*add)(float* x, const float* y, size_t n);
  // gate, up, out: [n]; out[i] = gelu(gate[i]) * up[i] through the half-precision table (kernels/ops/gelu.h), bit for
  // bit the reference's; out may alias gate or up.
  void (*gelu_mul)(const float* gate, const float* up, size_t n, float* out);
  // The row decoder for `type`, or nullptr when this variant has none (the reference codec is used). SIMD
  // decoders reproduce the reference's floats bit for bit.
  DequantRowFn (*dequant_row)(GgmlType type);
};

// A variant: its name, rank (higher wins), whether this CPU runs it, and its table.
struct OpsVariant {
  std::string_view name;
  int priority = 0;
  bool (*available)() = nullptr;
  const OpsKernels& (*kernels)() = nullptr;
};

// Every variant compiled into this binary (kernels/ops/ops_variants.cpp lists them).
std::vector<OpsVariant> compiled_ops_variants();

// The variants of `variants` this CPU runs, highest priority first.
std::vector<OpsVariant> available_ops_variants(const std::vector<OpsVariant>& variants);

// The table to use: among the available variants, the best one whose name is a prefix of `forced`
// (nullopt or no match: the best one overall).
const OpsKernels& choose_ops_kernels(const std::vector<OpsVariant>& variants, std::optional<std::string_view> forced);

// The process-wide table: chosen from the compiled variants on first use, forced by INFERTUNE_KERNEL.
const OpsKernels& ops_kernels();

// Forces the process-wide table for the object's lifetime (nullopt: the best variant), then restores it. For
// tests and benchmarks in one process; not while other threads run ops.
class ScopedOpsVariant {
 public:
  explicit ScopedOpsVariant(std::optional<std::string> forced);
  ~ScopedOpsVariant();
  ScopedOpsVariant(const ScopedOpsVariant&) = delete;
  ScopedOpsVariant& operator=(const ScopedOpsVariant&) = delete;

 private:
  const OpsKernels* saved_;
};

}  // namespace infertune
