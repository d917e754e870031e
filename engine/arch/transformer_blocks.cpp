#include "engine/arch/transformer_blocks.h"

#include <algorithm>
#include <cmath>

#include "kernels/matmul/matmul_registry.h"
#include "kernels/matmul/scalar_matmul.h"
#include "kernels/ops/elementwise.h"
#include "kernels/ops/embedding.h"
#include "kernels/ops/rms_norm.h"
#include "kernels/ops/softmax.h"

namespace infertune {
namespace {

// Below this many multiply-adds a chunk is not worth a thread of its own.
constexpr size_t kMinWorkPerChunk = 1 << 16;

// Matmul kernels compute any range of whole rows, so one row is their granularity; thread boundaries are
// still kept on 16 rows so that no two threads write into one 64-byte line of an output row.
constexpr size_t kRowGranule = 16;

size_t min_chunk_for(size_t work_per_item) {
  return std::max<size_t>(1, kMinWorkPerChunk / std::max<size_t>(1, work_per_item));
}

}  // namespace

BlockActivations block_activations(ForwardScratch& s, const ModelConfig& c, size_t n) {
  return {rows(s.x, n, c.n_embd),  rows(s.xn, n, c.n_embd),           rows(s.q, n, c.q_dim()),  rows(s.k, n, c.k_dim()),
          rows(s.v, n, c.v_dim()), rows(s.attn, n, c.attn_out_dim()), rows(s.proj, n, c.n_embd)};
}

Status embed_tokens(const WeightMatrix& table, std::span<const int32_t> tokens, std::span<float> x) {
  const size_t n_embd = table.n_cols;
  for (size_t t = 0; t < tokens.size(); ++t) {
    Status s = embedding_row(table.type, table.data, static_cast<uint64_t>(tokens[t]), x.subspan(t * n_embd, n_embd));
    if (!s) return fail("{}: {}", table.name, s.error().message);
  }
  return {};
}

void rms_norm_rows(std::span<const float> x, std::span<const float> gain, float eps, std::span<float> out) {
  const size_t width = gain.size();
  if (width == 0) return;
  for (size_t start = 0; start + width <= x.size(); start += width) {
    rms_norm(x.subspan(start, width), gain, eps, out.subspan(start, width));
  }
}

Status linear(const ParallelFor& threads, const WeightMatrix& w, std::span<const float> x, size_t n_tokens,
              std::span<float> y) {
  const MatmulProblem problem{w.type, w.data, w.n_rows, w.n_cols, x.data(), n_tokens, y.data()};
  if (Status s = check_matmul_problem(problem); !s) return fail("{}: {}", w.name, s.error().message);
  auto kernel = matmul_registry().find(w.type);
  if (!kernel) return fail("{}: {}", w.name, kernel.error().message);
  const MatmulFn fn = kernel->fn;
  // Static split: thread i always gets the same rows of W, so each thread streams its own slice of the
  // weights (the same slice on every call, warm in its core's caches when it fits).
  Status s = threads.run(
      w.n_rows, [&](size_t begin, size_t end) { fn(problem, begin, end); }, min_chunk_for(w.n_cols * n_tokens),
      kRowGranule);
  if (!s) return fail("{}: {}", w.name, s.error().message);
  return {};
}

void rope_queries_keys(const RopeParams& rope, uint32_t first_pos, size_t n_tokens, uint32_t head_dim,
                       std::span<float> q, uint32_t n_head, std::span<float> k, uint32_t n_head_kv) {
  std::vector<float> cos(rope.n_rot / 2);
  std::vector<float> sin(rope.n_rot / 2);
  for (size_t t = 0; t < n_tokens; ++t) {
    rope_angles(rope, static_cast<int64_t>(first_pos) + static_cast<int64_t>(t), cos, sin);
    for (uint32_t h = 0; h < n_head; ++h) rope_rotate(rope, cos, sin, q.subspan((t * n_head + h) * head_dim, head_dim));
    for (uint32_t h = 0; h < n_head_kv; ++h) {
      rope_rotate(rope, cos, sin, k.subspan((t * n_head_kv + h) * head_dim, head_dim));
    }
  }
}

void store_kv(KvCache& cache, uint32_t layer, uint32_t first_pos, size_t n_tokens, std::span<const float> k,
              std::span<const float> v) {
  const size_t k_dim = cache.k_dim();
  const size_t v_dim = cache.v_dim();
  for (size_t t = 0; t < n_tokens; ++t) {
    const auto pos = static_cast<uint32_t>(first_pos + t);
    std::copy_n(k.data() + t * k_dim, k_dim, cache.k(layer, pos));
    std::copy_n(v.data() + t * v_dim, v_dim, cache.v(layer, pos));
  }
}

namespace {

// One query head of one token: softmax(q . K[0..n_keys) * scale) . V[0..n_keys) -> out [head_dim_v].
void attend_one_head(const KvCache& cache, uint32_t layer, const ModelConfig& c, uint32_t kv_head, const float* q,
                     uint32_t n_keys, std::vector<float>& scores, std::vector<double>& acc, float* out) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  scores.resize(n_keys);
  for (uint32_t j = 0; j < n_keys; ++j) {
    const float* key = cache.k(layer, j) + static_cast<size_t>(kv_head) * c.head_dim;
    scores[j] = static_cast<float>(dot_f32_double(q, key, c.head_dim)) * scale;
  }
  softmax(scores);
  acc.assign(c.head_dim_v, 0.0);
  for (uint32_t j = 0; j < n_keys; ++j) {
    const float* value = cache.v(layer, j) + static_cast<size_t>(kv_head) * c.head_dim_v;
    for (uint32_t d = 0; d < c.head_dim_v; ++d) acc[d] += static_cast<double>(scores[j]) * value[d];
  }
  for (uint32_t d = 0; d < c.head_dim_v; ++d) out[d] = static_cast<float>(acc[d]);
}

}  // namespace

Status causal_attention(const ParallelFor& threads, const KvCache& cache, uint32_t layer, const ModelConfig& c,
                        uint32_t first_pos, size_t n_tokens, std::span<const float> q, std::span<float> out) {
  const uint32_t n_gqa = c.n_gqa();
  // Items are (token, query head) pairs; each writes its own slice of out.
  auto work = [&](size_t begin, size_t end) {
    std::vector<float> scores;
    std::vector<double> acc;
    for (size_t item = begin; item < end; ++item) {
      const size_t t = item / c.n_head;
      const auto h = static_cast<uint32_t>(item % c.n_head);
      const float* q_head = q.data() + (t * c.n_head + h) * c.head_dim;
      float* out_head = out.data() + (t * c.n_head + h) * c.head_dim_v;
      const auto n_keys = static_cast<uint32_t>(first_pos + t + 1);
      attend_one_head(cache, layer, c, h / n_gqa, q_head, n_keys, scores, acc, out_head);
    }
  };
  const size_t keys = first_pos + n_tokens;
  Status s = threads.run(n_tokens * c.n_head, work, min_chunk_for(keys * (c.head_dim + c.head_dim_v)));
  if (!s) return fail("attention, layer {}: {}", layer, s.error().message);
  return {};
}

Status swiglu_ffn(const ParallelFor& threads, const LayerWeights& layer, const ModelConfig& c, ForwardScratch& s,
                  size_t n) {
  const auto xn = rows(s.xn, n, c.n_embd);
  const auto gate = rows(s.gate, n, c.n_ff);
  const auto up = rows(s.up, n, c.n_ff);
  if (Status st = linear(threads, layer.ffn_gate, xn, n, gate); !st) return st;
  if (Status st = linear(threads, layer.ffn_up, xn, n, up); !st) return st;
  silu_mul(gate, up, gate);
  return linear(threads, layer.ffn_down, gate, n, rows(s.proj, n, c.n_embd));
}

Status output_logits(const ForwardPass& pass, const ForwardBatch& batch) {
  const ModelConfig& c = pass.model.config();
  const ModelWeights& w = pass.model.weights();
  const size_t n = batch.tokens.size();
  if (batch.logits.empty()) return {};
  // Only the rows whose logits are wanted go through the (large) output projection.
  const size_t first = batch.all_logits ? 0 : n - 1;
  const size_t n_out = n - first;
  const std::span<const float> x(pass.scratch.x.data() + first * c.n_embd, n_out * c.n_embd);
  const auto xn = rows(pass.scratch.xn, n_out, c.n_embd);
  rms_norm_rows(x, w.output_norm, c.rms_eps, xn);
  return linear(pass.threads, w.output, xn, n_out, batch.logits.first(n_out * c.n_vocab));
}

Status ForwardScratch::reserve(const ModelConfig& c, size_t n_tokens) {
  if (n_tokens <= capacity) return {};
  try {
    x.resize(n_tokens * c.n_embd);
    xn.resize(n_tokens * c.n_embd);
    q.resize(n_tokens * c.q_dim());
    k.resize(n_tokens * c.k_dim());
    v.resize(n_tokens * c.v_dim());
    attn.resize(n_tokens * c.attn_out_dim());
    gate.resize(n_tokens * c.n_ff);
    up.resize(n_tokens * c.n_ff);
    proj.resize(n_tokens * c.n_embd);
  } catch (const std::bad_alloc&) {
    return fail("cannot allocate activation buffers for a batch of {} tokens", n_tokens);
  }
  capacity = n_tokens;
  return {};
}

}  // namespace infertune
