// Prompt-batch matrix products of float weights (F32, F16, BF16): our own kernel (the registry's best
// variant, or INFERTUNE_KERNEL's) against oneDNN (kernels/onednn), at Llama-3.2-1B shapes (rows x cols:
// 2048x2048 attention, 8192x2048 ffn up/gate, 2048x8192 ffn down) and 32..512 tokens. Reports GFLOP/s
// (2 * tokens * rows * cols per product) per CPU-second of the benchmark's threads (Google Benchmark's
// default CPU time, which stays meaningful on a shared machine; on an idle one, threads:1 equals wall time).
// Threads(2) runs split the rows between two threads as the engine's pool does (each backend on its own
// rows, oneDNN limited to its calling thread).
// Filter as usual: --benchmark_filter='gemm/bf16/.*/2048x2048/'; --benchmark_format=json works.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/onednn/onednn_matmul.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

constexpr GgmlType kTypes[] = {GgmlType::F32, GgmlType::F16, GgmlType::BF16};

struct Shape {
  size_t rows, cols;
};
constexpr Shape kShapes[] = {{2048, 2048}, {8192, 2048}, {2048, 8192}};
constexpr size_t kTokens[] = {32, 64, 128, 256, 512};

// Weights of normal values in `type`, made once per (type, shape) and shared by the benchmarks.
const std::vector<std::byte>& weights(GgmlType type, Shape shape) {
  static std::vector<std::vector<std::byte>> made(std::size(kTypes) * std::size(kShapes));
  size_t slot = 0;
  while (kTypes[slot / std::size(kShapes)] != type) slot += std::size(kShapes);
  while (kShapes[slot % std::size(kShapes)].rows != shape.rows || kShapes[slot % std::size(kShapes)].cols != shape.cols)
    ++slot;
  std::vector<std::byte>& w = made[slot];
  if (w.empty()) {
    std::mt19937 rng(7);
    std::normal_distribution<float> dist;
    std::vector<float> values(shape.rows * shape.cols);
    for (float& v : values) v = dist(rng);
    w.resize(*ggml_row_bytes(type, shape.cols) * shape.rows);
    (void)quantize_row(type, values, w);
  }
  return w;
}

void run_gemm(benchmark::State& state, MatmulFn fn, GgmlType type, Shape shape, size_t n_tokens) {
  // Inputs shared by the threads of one benchmark: thread 0 makes them before the timing loop, which every
  // thread enters together (Google Benchmark starts it with a barrier), so the others read them inside it.
  static const std::vector<std::byte>* w = nullptr;
  static std::vector<float> x, y;
  if (state.thread_index() == 0) {
    w = &weights(type, shape);
    std::mt19937 rng(3);
    std::normal_distribution<float> dist;
    x.resize(n_tokens * shape.cols);
    for (float& v : x) v = dist(rng);
    y.assign(n_tokens * shape.rows, 0.0f);
  }
  // This thread's rows, on 16-row boundaries as the engine splits them.
  const auto threads = static_cast<size_t>(state.threads());
  const auto index = static_cast<size_t>(state.thread_index());
  const size_t granules = shape.rows / 16;
  const size_t begin = granules * index / threads * 16;
  const size_t end = granules * (index + 1) / threads * 16;
  for (auto _ : state) {
    const MatmulProblem problem{type, *w, shape.rows, shape.cols, x.data(), n_tokens, y.data()};
    fn(problem, begin, end);
    benchmark::ClobberMemory();
  }
  const double flops =
      2.0 * static_cast<double>(n_tokens) * static_cast<double>(end - begin) * static_cast<double>(shape.cols);
  state.counters["GFLOP/s"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  for (GgmlType type : kTypes) {
    auto own = matmul_registry().find(type);
    if (!own) continue;
    struct Backend {
      std::string name;
      MatmulFn fn;
    };
    std::vector<Backend> backends = {{"own-" + std::string(own->variant), own->fn}};
    if (onednn_supports(type)) backends.push_back({"onednn", onednn_matmul});
    for (const Shape shape : kShapes) {
      for (size_t n_tokens : kTokens) {
        for (const Backend& b : backends) {
          const std::string name = "gemm/" + std::string(ggml_type_name(type)) + "/" + b.name + "/" +
                                   std::to_string(shape.rows) + "x" + std::to_string(shape.cols) + "/" +
                                   std::to_string(n_tokens);
          benchmark::RegisterBenchmark(name.c_str(), run_gemm, b.fn, type, shape, n_tokens)
              ->Unit(benchmark::kMillisecond)
              ->Threads(1)
              ->Threads(2);
        }
      }
    }
  }
}

}  // namespace
}  // namespace infertune

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("onednn", infertune::onednn_summary());
  infertune::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
