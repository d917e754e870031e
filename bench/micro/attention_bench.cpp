// Attention micro-benchmarks: one KV head of a cache at context lengths 512 .. 16384, head sizes 64 and
// 128, grouped-query (4 query heads per KV head, as Llama-3.2-1B / Llama-3-8B) and plain multi-head
// (1), every K/V type, the standard and the flash kernel of every compiled variant this CPU runs; single
// thread. Two query shapes: one token (a generation step) and 16 tokens at the end of the context (a
// prompt-processing task of the forward pass, causal). Reports the K and V bytes read per second
// (Google Benchmark's bytes_per_second: each key and value row is read once per call) and keys/s
// (items_per_second). --benchmark_filter=flash/q8_0 and --benchmark_format=json work as usual.
//
// attention_threads/...: one decoding token over 1 or 2 KV heads (GQA 4:1) at 4096 and 16384 cached tokens
// on 2 threads of the engine's pool, as the forward pass runs a layer (engine/arch/attention_split.h):
// "unsplit" hands out one task per KV head (what a layer did before split-K), "split" lets
// plan_key_splits also split the keys between the threads.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/arch/attention_split.h"
#include "engine/threading/parallel_for.h"
#include "engine/threading/thread_pool.h"
#include "kernels/attention/attention.h"
#include "kernels/ggml_type.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

constexpr GgmlType kTypes[] = {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0};
constexpr uint32_t kContexts[] = {512, 1024, 2048, 4096, 8192, 16384};
constexpr uint32_t kHeadDims[] = {64, 128};
constexpr uint32_t kGroupSizes[] = {4, 1};
constexpr uint32_t kRowCounts[] = {1, 16};

struct Shape {
  GgmlType type;
  uint32_t head_dim, n_heads, n_rows, n_ctx;
};

// n_ctx rows of one head in `type`: 64 distinct rows repeated (quantizing every row would dominate the
// set-up; the bytes read are the same).
std::vector<std::byte> make_rows(GgmlType type, uint32_t n_ctx, uint32_t dim, uint32_t seed) {
  constexpr uint32_t kDistinct = 64;
  const size_t row_bytes = *ggml_row_bytes(type, dim);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> values(kDistinct * dim);
  for (float& v : values) v = dist(rng);
  std::vector<std::byte> distinct(kDistinct * row_bytes);
  for (uint32_t r = 0; r < kDistinct; ++r) {
    (void)quantize_row(type, std::span<const float>(values).subspan(r * dim, dim),
                       std::span<std::byte>(distinct).subspan(r * row_bytes, row_bytes));
  }
  std::vector<std::byte> rows(static_cast<size_t>(n_ctx) * row_bytes);
  for (uint32_t r = 0; r < n_ctx; ++r) {
    std::copy_n(distinct.begin() + static_cast<ptrdiff_t>((r % kDistinct) * row_bytes), row_bytes,
                rows.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(r) * row_bytes));
  }
  return rows;
}

std::string fmt_name(const char* family, std::string_view variant, const char* kind, GgmlType type,
                     uint32_t head_dim) {
  return std::string(family) + "/" + std::string(variant) + "/" + kind + "/" + std::string(ggml_type_name(type)) +
         "/d" + std::to_string(head_dim);
}

void run_attention(benchmark::State& state, AttentionFn fn, Shape shape) {
  const size_t row_bytes = *ggml_row_bytes(shape.type, shape.head_dim);
  const std::vector<std::byte> k = make_rows(shape.type, shape.n_ctx, shape.head_dim, 1);
  const std::vector<std::byte> v = make_rows(shape.type, shape.n_ctx, shape.head_dim, 2);
  const size_t q_stride = static_cast<size_t>(shape.n_heads) * shape.head_dim;
  std::vector<float> q(shape.n_rows * q_stride);
  std::mt19937 rng(3);
  std::normal_distribution<float> dist;
  for (float& x : q) x = dist(rng);
  std::vector<float> out(q.size());
  std::vector<uint32_t> rows(shape.n_rows), n_keys(shape.n_rows), cells(shape.n_ctx);
  std::iota(rows.begin(), rows.end(), 0u);
  std::iota(cells.begin(), cells.end(), 0u);
  for (uint32_t r = 0; r < shape.n_rows; ++r) n_keys[r] = shape.n_ctx - (shape.n_rows - 1 - r);  // causal
  AttentionProblem p;
  p.q = q.data();
  p.q_stride = q_stride;
  p.rows = rows;
  p.n_heads = shape.n_heads;
  p.n_keys = n_keys;
  p.cells = cells;
  p.k = {shape.type, k.data(), row_bytes, shape.head_dim};
  p.v = {shape.type, v.data(), row_bytes, shape.head_dim};
  p.scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
  p.out = out.data();
  p.out_stride = q_stride;
  if (Status s = check_attention_problem(p); !s) {
    state.SkipWithError(s.error().message.c_str());
    return;
  }
  AttentionScratch scratch;
  for (auto _ : state) {
    fn(p, scratch);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(k.size() + v.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * shape.n_ctx);
}

struct ThreadedShape {
  GgmlType type;
  uint32_t head_dim, n_kv, n_ctx;
  unsigned n_threads;
  bool split;
};

// One layer's attention for one token: a problem per KV head, on the engine's pool.
void run_threaded(benchmark::State& state, AttentionFn fn, ThreadedShape shape) {
  constexpr uint32_t kGqa = 4;
  const size_t row_bytes = *ggml_row_bytes(shape.type, shape.head_dim);
  std::vector<std::vector<std::byte>> k, v;
  for (uint32_t h = 0; h < shape.n_kv; ++h) {
    k.push_back(make_rows(shape.type, shape.n_ctx, shape.head_dim, 1 + 2 * h));
    v.push_back(make_rows(shape.type, shape.n_ctx, shape.head_dim, 2 + 2 * h));
  }
  const size_t q_dim = static_cast<size_t>(shape.n_kv) * kGqa * shape.head_dim;
  std::vector<float> q(q_dim), out(q_dim);
  std::mt19937 rng(3);
  std::normal_distribution<float> dist;
  for (float& x : q) x = dist(rng);
  const uint32_t row = 0, n_keys = shape.n_ctx;
  std::vector<uint32_t> cells(shape.n_ctx);
  std::iota(cells.begin(), cells.end(), 0u);
  std::vector<AttentionProblem> problems(shape.n_kv);
  for (uint32_t h = 0; h < shape.n_kv; ++h) {
    AttentionProblem& p = problems[h];
    p.q = q.data() + static_cast<size_t>(h) * kGqa * shape.head_dim;
    p.q_stride = q_dim;
    p.rows = std::span<const uint32_t>(&row, 1);
    p.n_heads = kGqa;
    p.n_keys = std::span<const uint32_t>(&n_keys, 1);
    p.cells = cells;
    p.k = {shape.type, k[h].data(), row_bytes, shape.head_dim};
    p.v = {shape.type, v[h].data(), row_bytes, shape.head_dim};
    p.scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
    p.out = out.data() + static_cast<size_t>(h) * kGqa * shape.head_dim;
    p.out_stride = q_dim;
  }
  ThreadPoolConfig config;
  config.n_threads = shape.n_threads;
  auto pool = ThreadPool::create(config);
  if (!pool) {
    state.SkipWithError(pool.error().message.c_str());
    return;
  }
  const ParallelFor threads(**pool, shape.n_threads);
  std::vector<AttentionScratch> scratch(shape.n_threads);
  SplitAttentionBuffers buffers;
  const std::optional<uint32_t> splits = shape.split ? std::nullopt : std::optional<uint32_t>(1);
  for (auto _ : state) {
    if (Status s = run_split_attention(threads, fn, problems, scratch, buffers, splits); !s) {
      state.SkipWithError(s.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["pieces"] = static_cast<double>(buffers.pieces.size());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 * shape.n_kv *
                          static_cast<int64_t>(row_bytes * shape.n_ctx));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * shape.n_ctx);
}

void register_threaded(const AttentionVariant& variant) {
  for (const auto& [kind, fn] :
       {std::pair{"standard", variant.kernels.standard}, std::pair{"flash", variant.kernels.flash}}) {
    for (GgmlType type : kTypes) {
      for (uint32_t head_dim : kHeadDims) {
        for (uint32_t n_kv : {1u, 2u}) {
          for (uint32_t n_ctx : {4096u, 16384u}) {
            for (bool split : {false, true}) {
              const std::string name = fmt_name("attention_threads", variant.name, kind, type, head_dim) + "/kv" +
                                       std::to_string(n_kv) + "/ctx" + std::to_string(n_ctx) + "/t2/" +
                                       (split ? "split" : "unsplit");
              benchmark::RegisterBenchmark(name.c_str(), run_threaded, fn, ThreadedShape{type, head_dim, n_kv, n_ctx, 2, split})
                  ->Unit(benchmark::kMicrosecond)
                  ->UseRealTime();
            }
          }
        }
      }
    }
  }
}

void register_all() {
  for (const AttentionVariant& variant : compiled_attention_variants()) {
    if (variant.available && !variant.available()) continue;
    for (const auto& [kind, fn] :
         {std::pair{"standard", variant.kernels.standard}, std::pair{"flash", variant.kernels.flash}}) {
      for (GgmlType type : kTypes) {
        for (uint32_t head_dim : kHeadDims) {
          for (uint32_t n_heads : kGroupSizes) {
            for (uint32_t n_rows : kRowCounts) {
              for (uint32_t n_ctx : kContexts) {
                const std::string name = "attention/" + std::string(variant.name) + "/" + kind + "/" +
                                         std::string(ggml_type_name(type)) + "/d" + std::to_string(head_dim) + "/gqa" +
                                         std::to_string(n_heads) + "/rows" + std::to_string(n_rows) + "/ctx" +
                                         std::to_string(n_ctx);
                benchmark::RegisterBenchmark(name.c_str(), run_attention, fn,
                                             Shape{type, head_dim, n_heads, n_rows, n_ctx})
                    ->Unit(benchmark::kMicrosecond);
              }
            }
          }
        }
      }
    }
    register_threaded(variant);
  }
}

}  // namespace
}  // namespace infertune

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  infertune::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
