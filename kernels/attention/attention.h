#pragma once
// Attention of a block of queries over the keys and values of a KV cache: for each query (row r, head h)
//   out = softmax(cap(scale * q . K[cells[0 .. n_keys[r])])) . V[same cells]
// where cap(s) = softcap * tanh(s / softcap) when the problem has a soft cap (gemma2), else s.
// The cache layout is the caller's: a problem names one KV head of one layer (row of cell c at
// data + c * stride, in f32, f16, bf16, q8_0 or q4_0) and the cells a query sees, already in the order the
// softmax sums them (by position) and already masked (causality and sequence membership are the caller's
// bookkeeping; here a query simply sees a prefix of `cells`). The heads of a problem are the query heads
// that share the KV head (grouped-query attention), so each key and value row is decoded once for all.
//
// Two algorithms per variant: `standard` (all scores of a query, an exact softmax, then the weighted sum
// of the values) and `flash` (key tiles with an online softmax: one pass, no score buffer per key).
// Variants: "scalar" (the reference: double accumulation, exact softmax; its flash is a plain scalar
// online softmax), "avx2" and "avx512" (their own translation units, chosen at start-up from CPUID).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/result.h"

namespace infertune {

// One KV head's rows in one layer of a cache: cell c's `dim` values start at data + c * stride.
struct KvHeadRows {
  GgmlType type = GgmlType::F32;
  const std::byte* data = nullptr;
  size_t stride = 0;  // bytes from one cell to the next
  uint32_t dim = 0;   // values per row (the head size)
};

// The unnormalized state of queries over part of their keys (split-K, see attention_split.h): for query
// iq = r * n_heads + h (r: the row's index within the problem) over the keys it saw,
//   max[iq] = the largest scaled score (-inf when it saw none), sum[iq] = sum exp(score - max[iq]),
//   acc[iq * v.dim ..] = sum exp(score - max[iq]) * value   (0 when it saw none).
struct AttentionPartial {
  float* max = nullptr;  // [n_rows * n_heads]
  float* sum = nullptr;  // [n_rows * n_heads]
  float* acc = nullptr;  // [n_rows * n_heads][v.dim]
};

struct AttentionProblem {
  const float* q = nullptr;          // query (row r, head h): q + rows[r] * q_stride + h * k.dim   [k.dim]
  size_t q_stride = 0;               // floats from one query row (token) to the next
  std::span<const uint32_t> rows;    // [n_rows] the token rows of q and out this problem computes
  uint32_t n_heads = 1;              // query heads sharing this KV head
  std::span<const uint32_t> n_keys;  // [n_rows] row r attends to cells[0 .. n_keys[r]), n_keys[r] >= 1
  std::span<const uint32_t> cells;   // [max n_keys] cache cells, in summation order
  KvHeadRows k, v;
  float scale = 1.0f;  // applied to q . k (1 / sqrt(head_dim) for llama-family models)
  // Attention sinks (gpt-oss): head h's softmax also sums exp(sinks[h] - max) in its denominator, a logit with no
  // value behind it, so a query may attend to "nothing". Null: none. A split-K partial leaves them to the merge.
  const float* sinks = nullptr;  // [n_heads]
  // Gemma 2's attention logit soft-capping: each scaled score s becomes softcap * tanh(s / softcap), before the
  // softmax. 0: none.
  float softcap = 0.0f;
  float* out = nullptr;  // output (row r, head h): out + rows[r] * out_stride + h * v.dim   [v.dim]
  size_t out_stride = 0;
  // Split-K: row r sums only cells[key_begin .. min(n_keys[r], key_end)) — possibly none — and the kernel
  // writes that range's state into *partial instead of writing `out`. Without `partial` the range must be
  // every key (the defaults).
  uint32_t key_begin = 0;
  uint32_t key_end = std::numeric_limits<uint32_t>::max();
  const AttentionPartial* partial = nullptr;
};

// Working memory of one thread, grown on demand and reused between calls (no allocation in steady state).
struct AttentionScratch {
  std::vector<float> key_tile, value_tile, scores, acc, stats;
};

using AttentionFn = void (*)(const AttentionProblem& problem, AttentionScratch& scratch);

struct AttentionKernels {
  std::string_view variant;
  AttentionFn standard = nullptr;
  AttentionFn flash = nullptr;
};

// What head h's sink adds to a softmax denominator whose scores were shifted by `max`: exp(sinks[h] - max), 0
// without sinks. A sink far above every score overflows to infinity, and the output goes to 0, its limit.
inline float sink_weight(const AttentionProblem& p, uint32_t head, float max) {
  return p.sinks == nullptr ? 0.0f : std::exp(p.sinks[head] - max);
}

// A scaled score under the problem's soft cap (AttentionProblem::softcap): as ggml computes it, tanh of the score
// times 1 / softcap, times softcap.
inline float soft_capped(float score, float softcap) {
  return softcap == 0.0f ? score : softcap * std::tanh(score * (1.0f / softcap));
}

// The K/V storage types the kernels read.
bool is_attention_kv_type(GgmlType type);

// Errors when a problem is malformed: an unsupported type, a dim that is not whole blocks of its type,
// n_keys of 0 or beyond cells, missing pointers, sizes that disagree, a key range that is empty or (without
// `partial`) not every key.
Status check_attention_problem(const AttentionProblem& problem);

// One variant: a name, a rank (higher wins), whether this CPU runs it, and its kernels.
struct AttentionVariant {
  std::string_view name;
  int priority = 0;
  bool (*available)() = nullptr;
  AttentionKernels kernels;
};

// Every variant compiled into this binary, available or not.
std::vector<AttentionVariant> compiled_attention_variants();

// The kernels in use: the best available variant, or the one forced by INFERTUNE_ATTENTION (a variant
// name), else by INFERTUNE_KERNEL (the variant whose name starts that value's, so INFERTUNE_KERNEL=scalar
// forces the reference here too and avx512vnni selects avx512). Errors name an unknown forced variant.
Result<AttentionKernels> attention_kernels();

// Forces one variant (nullopt: the best) for the object's lifetime. For tests and benchmarks; not while
// another thread runs attention.
class ScopedAttentionVariant {
 public:
  explicit ScopedAttentionVariant(std::optional<std::string> forced);
  ~ScopedAttentionVariant();
  ScopedAttentionVariant(const ScopedAttentionVariant&) = delete;
  ScopedAttentionVariant& operator=(const ScopedAttentionVariant&) = delete;

 private:
  std::optional<std::string> saved_;
  bool saved_active_ = false;
};

}  // namespace infertune
