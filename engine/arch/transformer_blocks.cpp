#include "engine/arch/transformer_blocks.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "engine/arch/activation_observer.h"
#include "engine/arch/attention_split.h"
#include "engine/arch/op_profile.h"
#include "kernels/attention/attention.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/matmul/scalar_matmul.h"
#include "kernels/onednn/gemm_selection.h"
#include "kernels/ops/elementwise.h"
#include "kernels/ops/embedding.h"
#include "kernels/ops/gelu.h"
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
  const OpTimer timer(ProfiledOp::embed);
  const size_t n_embd = table.n_cols;
  for (size_t t = 0; t < tokens.size(); ++t) {
    Status s = embedding_row(table.type, table.data, static_cast<uint64_t>(tokens[t]), x.subspan(t * n_embd, n_embd),
                             table.layout);
    if (!s) return fail("{}: {}", table.name, s.error().message);
  }
  return {};
}

void scale_rows(std::span<float> x, float factor) {
  const OpTimer timer(ProfiledOp::embed);
  for (float& value : x) value *= factor;
}

void add_residual(std::span<float> x, std::span<const float> proj) {
  const OpTimer timer(ProfiledOp::residual);
  add_in_place(x, proj);
}

void rms_norm_rows(std::span<const float> x, std::span<const float> gain, float eps, std::span<float> out) {
  const size_t width = gain.size();
  if (width == 0) return;  // a norm the model does not have: nothing to do, nothing to time
  const OpTimer timer(ProfiledOp::norm);
  for (size_t start = 0; start + width <= x.size(); start += width) {
    rms_norm(x.subspan(start, width), gain, eps, out.subspan(start, width));
  }
}

namespace {

// A product ready to run: its problem, its kernel, and where its rows start in a group's row sequence.
struct PreparedProduct {
  MatmulProblem problem;
  MatmulFn fn = nullptr;
  size_t first_row = 0;
};

// y = W x for x as quantized in xq, checked, with the registry's kernel for W's type.
Result<PreparedProduct> prepare_product(const WeightMatrix& w, const QuantizedActivations& xq, std::span<float> y) {
  if (!xq.has(activation_format(w.type))) {
    return fail("{}: the input was not quantized for {} weights", w.name, ggml_type_name(w.type));
  }
  const MatmulProblem p{w.type, w.data, w.n_rows, w.n_cols, xq.x(), xq.n_tokens(), y.data(), &xq, w.layout};
  if (Status s = check_matmul_problem(p); !s) return fail("{}: {}", w.name, s.error().message);
  auto kernel = matmul_registry().find(w.type);
  if (!kernel) return fail("{}: {}", w.name, kernel.error().message);
  if (w.layout == WeightLayout::interleaved8 && !kernel->reads_interleaved) {
    return fail("{}: repacked at load for another kernel than {}'s (load the model again, or with --no-repack)", w.name,
                kernel->variant);
  }
  return PreparedProduct{p, kernel->fn};
}

// A batch: a static split, thread i always gets the same rows of W, so each thread streams its own slice of
// the weights (the same slice on every call, warm in its core's caches when it fits). A few tokens
// (generation) stream every weight once per step whoever reads it: rows are handed out in chunks as threads
// finish, since a fixed split leaves the faster thread waiting (16% of thread time idle on a 2-core VM,
// bench --profile; docs/decode-speed.md).
RangeSplit row_split(WeightLayout layout, size_t n_tokens) {
  return runs_matrix_vector(layout, n_tokens) ? RangeSplit::balanced : RangeSplit::fixed;
}

// One product, rows split between the threads.
Status run_linear(const ParallelFor& threads, const WeightMatrix& w, const PreparedProduct& product) {
  const MatmulProblem& problem = product.problem;
  const ProfiledOp op = OpProfile::enabled() ? profiled_op_of_weight(w.name) : ProfiledOp::matmul;
  const OpTimer timer(op, w.data.size());
  const auto run_rows = [&](MatmulFn rows_fn, const MatmulProblem& p) {
    return run_timed_ranges(
        op, threads, p.n_rows, [&](size_t begin, size_t end) { rows_fn(p, begin, end); },
        min_chunk_for(w.n_cols * p.n_tokens), kRowGranule, row_split(p.layout, p.n_tokens));
  };
  // Float weights in a batch run on our kernel or oneDNN, whichever a measurement found faster for the shape.
  Status s = float_gemm_applies(problem) ? run_float_gemm(problem, product.fn, threads.n_threads(), run_rows)
                                         : run_rows(product.fn, problem);
  if (!s) return fail("{}: {}", w.name, s.error().message);
  return {};
}

}  // namespace

Status quantize_input(const ParallelFor& threads, std::initializer_list<const WeightMatrix*> readers,
                      std::span<const float> x, size_t n_tokens, QuantizedActivations& xq) {
  GgmlType types[8];
  size_t n_types = 0;
  for (const WeightMatrix* w : readers) {
    if (n_types < std::size(types)) types[n_types++] = w->type;
  }
  const WeightMatrix& first = **readers.begin();
  if (x.size() < n_tokens * first.n_cols) {
    return fail("{}: input of {} floats for {} tokens x {} values", first.name, x.size(), n_tokens, first.n_cols);
  }
  if (Status s = xq.prepare(x.data(), n_tokens, first.n_cols, std::span(types, n_types)); !s) {
    return fail("{}: {}", first.name, s.error().message);
  }
  if (ActivationObserver* observer = activation_observer()) {
    std::string_view previous;
    for (const WeightMatrix* w : readers) {
      // The parts of a fused matrix (phi3's q/k/v) carry its name: one input, observed once.
      if (w->name != previous) observer->observe(w->name, x.first(n_tokens * first.n_cols), n_tokens, first.n_cols);
      previous = w->name;
    }
  }
  // Token ranges on whole activation panels, so that no two threads write into one panel.
  const OpTimer timer(ProfiledOp::quantize);
  Status s = run_timed_ranges(
      ProfiledOp::quantize, threads, n_tokens, [&](size_t begin, size_t end) { xq.quantize(begin, end); },
      min_chunk_for(8 * first.n_cols), kPanelTokens);
  if (!s) return fail("{}: quantizing the input: {}", first.name, s.error().message);
  return {};
}

Status linear_group(const ParallelFor& threads, ProfiledOp op, std::initializer_list<LinearOutput> outputs,
                    const QuantizedActivations& xq) {
  PreparedProduct members[4];
  size_t n_members = 0, total_rows = 0, max_cols = 0;
  uint64_t weight_bytes = 0;
  bool separately = outputs.size() > std::size(members);
  for (const LinearOutput& out : outputs) {
    if (separately) break;
    auto product = prepare_product(*out.w, xq, out.y);
    if (!product) return product.error();
    if (float_gemm_applies(product->problem)) separately = true;
    product->first_row = total_rows;
    members[n_members++] = *product;
    total_rows += out.w->n_rows;
    max_cols = std::max<size_t>(max_cols, out.w->n_cols);
    weight_bytes += out.w->data.size();
  }
  if (separately) {
    for (const LinearOutput& out : outputs) {
      if (Status s = linear(threads, *out.w, xq, out.y); !s) return s;
    }
    return {};
  }
  const OpTimer timer(op, weight_bytes);
  const size_t n_tokens = xq.n_tokens();
  Status s = run_timed_ranges(
      op, threads, total_rows,
      [&](size_t begin, size_t end) {
        for (size_t m = 0; m < n_members; ++m) {
          const PreparedProduct& g = members[m];
          const size_t lo = std::max(begin, g.first_row), hi = std::min(end, g.first_row + g.problem.n_rows);
          if (lo < hi) g.fn(g.problem, lo - g.first_row, hi - g.first_row);
        }
      },
      min_chunk_for(max_cols * n_tokens), kRowGranule, row_split(members[0].problem.layout, n_tokens));
  if (!s) return fail("{}: {}", outputs.begin()->w->name, s.error().message);
  return {};
}

Status linear_jobs(const ParallelFor& threads, ProfiledOp op, std::span<const LinearJob> jobs) {
  thread_local std::vector<PreparedProduct> members;
  members.clear();
  size_t total_rows = 0, widest = 0;
  uint64_t weight_bytes = 0;
  for (const LinearJob& job : jobs) {
    auto product = prepare_product(*job.w, *job.xq, job.y);
    if (!product) return product.error();
    if (float_gemm_applies(product->problem)) {
      for (const LinearJob& j : jobs) {
        if (Status s = linear(threads, *j.w, *j.xq, j.y); !s) return s;
      }
      return {};
    }
    product->first_row = total_rows;
    members.push_back(*product);
    total_rows += job.w->n_rows;
    widest = std::max<size_t>(widest, job.w->n_cols * job.xq->n_tokens());
    weight_bytes += job.w->data.size();
  }
  if (members.empty()) return {};
  // A view of the calling thread's list: the pool's threads see a thread_local as their own (empty) one.
  const std::span<const PreparedProduct> all(members);
  const OpTimer timer(op, weight_bytes);
  Status s = run_timed_ranges(
      op, threads, total_rows,
      [&](size_t begin, size_t end) {
        // The first member ending past `begin`, then on while they start before `end`.
        auto m = std::upper_bound(all.begin(), all.end(), begin, [](size_t row, const PreparedProduct& p) {
          return row < p.first_row + p.problem.n_rows;
        });
        for (; m != all.end() && m->first_row < end; ++m) {
          const size_t lo = std::max(begin, m->first_row), hi = std::min(end, m->first_row + m->problem.n_rows);
          m->fn(m->problem, lo - m->first_row, hi - m->first_row);
        }
      },
      min_chunk_for(widest), kRowGranule, RangeSplit::balanced);
  if (!s) return fail("{}: {}", jobs.front().w->name, s.error().message);
  return {};
}

Status linear(const ParallelFor& threads, const WeightMatrix& w, const QuantizedActivations& xq, std::span<float> y) {
  auto product = prepare_product(w, xq, y);
  if (!product) return product.error();
  return run_linear(threads, w, *product);
}

Status linear(const ParallelFor& threads, const WeightMatrix& w, std::span<const float> x, size_t n_tokens,
              std::span<float> y, QuantizedActivations& xq) {
  if (Status s = quantize_input(threads, {&w}, x, n_tokens, xq); !s) return s;
  return linear(threads, w, xq, y);
}

Status linear(const ParallelFor& threads, const WeightMatrix& w, std::span<const float> x, size_t n_tokens,
              std::span<float> y) {
  thread_local QuantizedActivations xq;
  return linear(threads, w, x, n_tokens, y, xq);
}

void rope_queries_keys(const RopeParams& rope, const KvUbatch& kv, size_t n_tokens, uint32_t head_dim,
                       std::span<float> q, uint32_t n_head, std::span<float> k, uint32_t n_head_kv) {
  const OpTimer timer(ProfiledOp::rope);
  std::vector<float> cos(rope.n_rot / 2);
  std::vector<float> sin(rope.n_rot / 2);
  for (size_t t = 0; t < n_tokens; ++t) {
    // Tokens of several sequences often share a position; the angles are computed once for a run of them.
    if (t == 0 || kv.positions[t] != kv.positions[t - 1]) rope_angles(rope, kv.positions[t], cos, sin);
    for (uint32_t h = 0; h < n_head; ++h) rope_rotate(rope, cos, sin, q.subspan((t * n_head + h) * head_dim, head_dim));
    for (uint32_t h = 0; h < n_head_kv; ++h) {
      rope_rotate(rope, cos, sin, k.subspan((t * n_head_kv + h) * head_dim, head_dim));
    }
  }
}

void store_kv(KvCache& cache, uint32_t layer, const KvUbatch& kv, size_t n_tokens, std::span<const float> k,
              std::span<const float> v) {
  const OpTimer timer(ProfiledOp::kv_store);
  const KvLayout& l = cache.storage().layout();
  const size_t k_dim = static_cast<size_t>(l.n_head_kv) * l.head_dim_k;
  const size_t v_dim = static_cast<size_t>(l.n_head_kv) * l.head_dim_v;
  for (size_t t = 0; t < n_tokens; ++t) {
    cache.storage().write_k(layer, kv.cells[t], k.subspan(t * k_dim, k_dim));
    cache.storage().write_v(layer, kv.cells[t], v.subspan(t * v_dim, v_dim));
  }
}

namespace {

// Query rows per attention task: enough that a decoded key tile serves many queries, few enough that a
// prompt splits into many tasks.
constexpr size_t kQueryRowsPerTask = 16;

// One task: a block of rows of one group, one KV head, over the group's keys from first_key on.
struct AttentionTask {
  uint32_t group;
  uint32_t kv_head;
  uint32_t first_row;  // within the group
  uint32_t n_rows;
  uint32_t first_key = 0;                // index into the group's key_cells where the task's keys start
  uint32_t window_keys = kNoWindowSlot;  // a windowed row's key count: its index in list_tasks' windowed_n_keys
  static constexpr uint32_t kNoWindowSlot = 0xFFFFFFFFu;
};

// Tasks of the later rows (which see more keys) first, so the dynamic hand-out ends with the small ones. With
// a window, the rows from the first one it cuts on are single-row tasks over their window's keys.
// windowed_n_keys: the key counts of the rows a window cuts (the problems' spans point into it).
void list_tasks(const KvUbatch& kv, uint32_t n_head_kv, uint32_t window, std::vector<AttentionTask>& tasks,
                std::vector<uint32_t>& windowed_n_keys) {
  tasks.clear();
  windowed_n_keys.clear();
  const auto groups = kv.active_groups();
  for (uint32_t g = 0; g < groups.size(); ++g) {
    const KvAttentionGroup& group = groups[g];
    size_t whole = 0;  // rows [0, whole) see every key up to their own
    while (whole < group.rows.size() && window_start(kv, group, whole, window) == 0) ++whole;
    for (size_t i = whole; i < group.rows.size(); ++i) {
      const uint32_t first = window_start(kv, group, i, window);
      const auto slot = static_cast<uint32_t>(windowed_n_keys.size());
      windowed_n_keys.push_back(group.n_keys[i] - first);
      for (uint32_t h = 0; h < n_head_kv; ++h) tasks.push_back({g, h, static_cast<uint32_t>(i), 1, first, slot});
    }
    for (size_t end = whole; end > 0;) {
      const size_t begin = end > kQueryRowsPerTask ? end - kQueryRowsPerTask : 0;
      for (uint32_t h = 0; h < n_head_kv; ++h) {
        tasks.push_back({g, h, static_cast<uint32_t>(begin), static_cast<uint32_t>(end - begin)});
      }
      end = begin;
    }
  }
}

}  // namespace

uint32_t window_start(const KvUbatch& kv, const KvAttentionGroup& g, size_t i, uint32_t window) {
  if (window == 0) return 0;
  const int64_t first_visible = static_cast<int64_t>(kv.positions[g.rows[i]]) - window + 1;
  const auto keys_end = g.key_pos.begin() + g.n_keys[i];
  return static_cast<uint32_t>(std::lower_bound(g.key_pos.begin(), keys_end, first_visible) - g.key_pos.begin());
}

Status causal_attention(const ParallelFor& threads, const KvCache& cache, uint32_t layer, const ModelConfig& c,
                        const KvUbatch& kv, size_t n_tokens, std::span<const float> q, std::span<float> out,
                        std::span<AttentionScratch> scratch, std::span<const float> sinks) {
  const OpTimer timer(ProfiledOp::attention);
  if (!sinks.empty() && sinks.size() != c.n_head) {
    return fail("attention, layer {}: {} sinks for {} heads", layer, sinks.size(), c.n_head);
  }
  auto kernels = attention_kernels();
  if (!kernels) return fail("attention, layer {}: {}", layer, kernels.error().message);
  const AttentionFn fn = kv.flash_attention ? kernels->flash : kernels->standard;
  if (scratch.size() < threads.n_threads()) return fail("attention: scratch for {} threads", threads.n_threads());
  const float scale = c.attention_score_scale();
  const uint32_t window = c.is_sliding_layer(layer) ? c.sliding_window : 0;
  const uint32_t n_gqa = c.n_gqa();
  const auto groups = kv.active_groups();
  // The calling thread's buffers, reused from call to call (as linear()'s quantized input).
  thread_local std::vector<AttentionTask> tasks;
  thread_local std::vector<uint32_t> windowed_n_keys;
  thread_local std::vector<AttentionProblem> problems;
  thread_local SplitAttentionBuffers split_buffers;
  auto problem_for = [&](const AttentionTask& task) {
    const KvAttentionGroup& g = groups[task.group];
    AttentionProblem p;
    p.q = q.data() + static_cast<size_t>(task.kv_head) * n_gqa * c.head_dim;
    p.q_stride = c.q_dim();
    p.rows = std::span<const uint32_t>(g.rows).subspan(task.first_row, task.n_rows);
    p.n_heads = n_gqa;
    p.n_keys = task.window_keys == AttentionTask::kNoWindowSlot
                   ? std::span<const uint32_t>(g.n_keys).subspan(task.first_row, task.n_rows)
                   : std::span<const uint32_t>(windowed_n_keys).subspan(task.window_keys, 1);
    p.cells = std::span<const uint32_t>(g.key_cells).subspan(task.first_key);
    p.k = cache.storage().k_head(layer, task.kv_head);
    p.v = cache.storage().v_head(layer, task.kv_head);
    p.scale = scale;
    p.softcap = c.attn_logit_softcap;
    p.sinks = sinks.empty() ? nullptr : sinks.data() + static_cast<size_t>(task.kv_head) * n_gqa;
    p.out = out.data() + static_cast<size_t>(task.kv_head) * n_gqa * c.head_dim_v;
    p.out_stride = c.attn_out_dim();
    return p;
  };
  // Every group checked once, whole (the tasks are its slices), before any thread runs.
  for (uint32_t g = 0; g < groups.size(); ++g) {
    AttentionProblem whole = problem_for({g, 0, 0, static_cast<uint32_t>(groups[g].rows.size())});
    for (uint32_t r : whole.rows) {
      if (r >= n_tokens) return fail("attention, layer {}: row {} of {} tokens", layer, r, n_tokens);
    }
    if (Status s = check_attention_problem(whole); !s) return fail("attention, layer {}: {}", layer, s.error().message);
  }
  list_tasks(kv, c.n_head_kv, window, tasks, windowed_n_keys);
  problems.clear();
  for (const AttentionTask& task : tasks) problems.push_back(problem_for(task));
  Status s = run_split_attention(threads, fn, problems, scratch, split_buffers);
  if (!s) return fail("attention, layer {}: {}", layer, s.error().message);
  return {};
}

namespace {

// The gate's activation times up, element-wise: silu_mul or gelu_mul (kernels/ops).
struct GateActivation {
  const char* name;
  void (*mul)(std::span<const float> gate, std::span<const float> up, std::span<float> out);
};
constexpr GateActivation kSilu{"silu", silu_mul};
constexpr GateActivation kGelu{"gelu", gelu_mul};
constexpr GateActivation kSwigluOai{"swiglu_oai", swiglu_oai_mul};

GateActivation gate_activation(GateKind kind) {
  switch (kind) {
    case GateKind::silu:
      return kSilu;
    case GateKind::gelu:
      return kGelu;
    case GateKind::swiglu_oai:
      return kSwigluOai;
  }
  return kSilu;
}

// An element-wise activation's work per value (an exp or a table lookup and a few multiplies), in the units of
// kMinWorkPerChunk, and its split's granule: 16 floats, one cache line, so that no two threads write into one.
constexpr size_t kActivationWork = 16;
constexpr size_t kElementGranule = 16;

// gate = activation(gate) * up over n rows of n_ff, the n * n_ff values split between the threads (one token's row
// is already too much for one thread: 9216 GELUs of Gemma 2 2B took 5% of a decode step on one).
Status activate_rows(const ParallelFor& threads, GateActivation activation, std::span<float> gate,
                     std::span<const float> up, size_t n, size_t n_ff) {
  const OpTimer timer(ProfiledOp::silu);
  return run_timed_ranges(
      ProfiledOp::silu, threads, n * n_ff,
      [&](size_t begin, size_t end) {
        activation.mul(gate.subspan(begin, end - begin), up.subspan(begin, end - begin),
                       gate.subspan(begin, end - begin));
      },
      min_chunk_for(kActivationWork), kElementGranule);
}

}  // namespace

Status gate_rows(const ParallelFor& threads, GateKind kind, std::span<float> gate, std::span<const float> up, size_t n,
                 size_t width) {
  const GateActivation activation = gate_activation(kind);
  if (Status st = activate_rows(threads, activation, gate, up, n, width); !st) {
    return fail("ffn, {}: {}", activation.name, st.error().message);
  }
  return {};
}

Status gated_product(const ParallelFor& threads, const GatedMatrices& m, GateKind kind, std::span<const float> x,
                     size_t n, std::span<float> out, ForwardScratch& s) {
  const size_t width = m.gate->n_rows;
  const auto gate = rows(s.gate, n, width);
  const auto up = rows(s.up, n, width);
  // gate and up read x quantized once.
  if (Status st = quantize_input(threads, {m.gate, m.up}, x, n, s.xq); !st) return st;
  if (Status st = linear_group(threads, ProfiledOp::ffn_gate_up, {{m.gate, gate}, {m.up, up}}, s.xq); !st) return st;
  if (Status st = gate_rows(threads, kind, gate, up, n, width); !st) return st;
  return linear(threads, *m.down, gate, n, out, s.xq);
}

Status swiglu_ffn(const ParallelFor& threads, const LayerWeights& layer, const ModelConfig& c, ForwardScratch& s,
                  size_t n) {
  return gated_product(threads, {&layer.ffn_gate, &layer.ffn_up, &layer.ffn_down}, GateKind::silu,
                       rows(s.xn, n, c.n_embd), n, rows(s.proj, n, c.n_embd), s);
}

Status geglu_ffn(const ParallelFor& threads, const LayerWeights& layer, const ModelConfig& c, ForwardScratch& s,
                 size_t n) {
  return gated_product(threads, {&layer.ffn_gate, &layer.ffn_up, &layer.ffn_down}, GateKind::gelu,
                       rows(s.xn, n, c.n_embd), n, rows(s.proj, n, c.n_embd), s);
}

namespace {

// logits = cap * tanh(logits / cap) (gemma's final soft cap; tanhf, as ggml computes it), split between the threads:
// 256000 of them per token in Gemma 2 took 5% of a decode step on one.
Status soft_cap_logits(const ParallelFor& threads, std::span<float> logits, float cap) {
  const OpTimer timer(ProfiledOp::logit_cap);
  const float inverse = 1.0f / cap;
  return run_timed_ranges(
      ProfiledOp::logit_cap, threads, logits.size(),
      [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) logits[i] = cap * std::tanh(logits[i] * inverse);
      },
      min_chunk_for(kActivationWork), kElementGranule);
}

}  // namespace

Status output_logits(const ForwardPass& pass, const ForwardBatch& batch) {
  const ModelConfig& c = pass.model.config();
  const ModelWeights& w = pass.model.weights();
  const size_t n_out = batch.output_rows.size();
  if (n_out == 0) return {};
  // Only the rows whose logits are wanted go through the (large) output projection: row i of xn is the
  // normed x of token output_rows[i]. Embeddings are those rows themselves.
  const auto xn = batch.embeddings ? batch.logits.first(n_out * c.n_embd) : rows(pass.scratch.xn, n_out, c.n_embd);
  for (size_t i = 0; i < n_out; ++i) {
    const std::span<const float> x(pass.scratch.x.data() + batch.output_rows[i] * c.n_embd, c.n_embd);
    rms_norm_rows(x, w.output_norm, c.rms_eps, xn.subspan(i * c.n_embd, c.n_embd));
  }
  if (batch.embeddings) return {};
  const auto logits = batch.logits.first(n_out * c.n_vocab);
  if (Status st = linear(pass.threads, w.output, xn, n_out, logits, pass.scratch.xq); !st) return st;
  if (c.final_logit_softcap != 0) return soft_cap_logits(pass.threads, logits, c.final_logit_softcap);
  return {};
}

uint32_t cpu_layer_count(const ForwardPass& pass) {
  return pass.offload ? pass.offload->first_layer() : pass.model.config().n_layers;
}

Status finish_forward(const ForwardPass& pass, const ForwardBatch& batch, std::span<float> x) {
  if (pass.offload) {
    // A Context that keeps embeddings never offloads the output layer (Context::create).
    if (batch.embeddings && pass.offload->runs_output()) return fail("embeddings with the output layer on the GPU");
    if (Status st = pass.offload->forward(pass, batch, x); !st) return st;
    if (pass.offload->runs_output()) return {};
  }
  return output_logits(pass, batch);
}

ForwardScratchSizes forward_scratch_sizes(const ModelConfig& c, size_t n_tokens) {
  ForwardScratchSizes s;
  s.x = s.xn = s.proj = n_tokens * c.n_embd;
  s.q = n_tokens * c.q_dim();
  s.k = n_tokens * c.k_dim();
  s.v = n_tokens * c.v_dim();
  s.attn = n_tokens * c.attn_out_dim();
  // With experts, each token's rows for every expert it goes to, side by side.
  const size_t ffn_rows = c.is_moe() ? n_tokens * c.n_expert_used : n_tokens;
  s.gate = s.up = std::max<size_t>(ffn_rows * c.ffn_hidden(), n_tokens * c.n_ff_shexp);
  s.router = c.is_moe() ? n_tokens * c.n_expert : 0;
  s.expert_x = s.expert_out = c.is_moe() ? ffn_rows * c.n_embd : 0;
  return s;
}

Status ForwardScratch::reserve(const ModelConfig& c, size_t n_tokens) {
  if (n_tokens <= capacity) return {};
  const ForwardScratchSizes sizes = forward_scratch_sizes(c, n_tokens);
  try {
    using Buffer = std::pair<std::vector<float>*, size_t>;
    for (auto [buffer, size] : std::initializer_list<Buffer>{{&x, sizes.x},
                                                             {&xn, sizes.xn},
                                                             {&q, sizes.q},
                                                             {&k, sizes.k},
                                                             {&v, sizes.v},
                                                             {&attn, sizes.attn},
                                                             {&gate, sizes.gate},
                                                             {&up, sizes.up},
                                                             {&proj, sizes.proj},
                                                             {&router, sizes.router},
                                                             {&expert_x, sizes.expert_x},
                                                             {&expert_out, sizes.expert_out}}) {
      buffer->resize(size);
    }
  } catch (const std::bad_alloc&) {
    return fail("cannot allocate activation buffers for a batch of {} tokens", n_tokens);
  }
  capacity = n_tokens;
  return {};
}

}  // namespace infertune
