// Matmul micro-benchmarks of every compiled variant this CPU runs, per weight type, at Llama-3.2-1B shapes
// (rows x cols: 2048x2048 attention, 8192x2048 ffn up/gate, 2048x8192 ffn down), single thread:
//
//   matvec/<type>/<variant>/<rows>x<cols>         one token. Reports weight bytes read per second
//                                                 (bytes_per_second): a matvec reads every weight byte
//                                                 once, so this is the kernel's effective bandwidth.
//                                                 <variant>+repack: the weights in the interleaved layout
//                                                 the engine repacks them into at load (interleaved_rows.h).
//   matmul/<type>/<variant>/<rows>x<cols>/t<n>    a batch of n = 4 (matrix-vector path), 8, 16, 128 (tiled)
//                                                 tokens, activations quantized once beforehand (as the
//                                                 engine shares them between the projections of one
//                                                 input). Reports GOP/s (2 rows cols n per call), tokens/s.
//                                                 <variant>+repack: the interleaved layout, as for matvec.
//   quantize/<format>/<cols>/t<n>                 activation quantization of n tokens (rows and panels),
//                                                 floats read per second.
//
// The scalar reference runs matvec only (it is far too slow for prompt batches). Optional filter as usual:
// --benchmark_filter=matmul/q4_K; --benchmark_format=json works.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/matmul/quantized_activations.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

constexpr GgmlType kTypes[] = {GgmlType::Q4_K, GgmlType::Q6_K,   GgmlType::Q8_0,   GgmlType::Q4_0,
                               GgmlType::F16,  GgmlType::F32,    GgmlType::BF16,   GgmlType::Q5_K,
                               GgmlType::Q5_0, GgmlType::Q4_1,   GgmlType::Q5_1,   GgmlType::Q2_K,
                               GgmlType::Q3_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::MXFP4};

struct Shape {
  size_t rows, cols;
};
constexpr Shape kShapes[] = {{2048, 2048}, {8192, 2048}, {2048, 8192}};
constexpr size_t kBatchTokens[] = {2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 128};

// A weight matrix of `rows` rows: 16 distinct rows quantized from normal values, repeated (quantizing
// millions of values with the reference K-quant search would dominate the run; the bytes read are the same).
std::vector<std::byte> make_weights(GgmlType type, size_t rows, size_t cols) {
  constexpr size_t kDistinct = 16;
  const size_t row_bytes = *ggml_row_bytes(type, cols);
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  std::vector<float> values(kDistinct * cols);
  for (float& v : values) v = dist(rng);
  std::vector<std::byte> distinct(kDistinct * row_bytes);
  (void)quantize_row(type, values, distinct);
  std::vector<std::byte> weights(rows * row_bytes);
  for (size_t r = 0; r < rows; ++r) {
    std::copy_n(distinct.begin() + static_cast<ptrdiff_t>((r % kDistinct) * row_bytes), row_bytes,
                weights.begin() + static_cast<ptrdiff_t>(r * row_bytes));
  }
  return weights;
}

std::vector<float> random_activations(size_t n) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist;
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

void run_matmul(benchmark::State& state, MatmulFn fn, GgmlType type, Shape shape, size_t n_tokens,
                WeightLayout layout) {
  std::vector<std::byte> weights = make_weights(type, shape.rows, shape.cols);
  if (layout == WeightLayout::interleaved8) {
    std::vector<std::byte> file_layout = weights;
    if (Status s = interleave_rows(type, file_layout, shape.rows, shape.cols, weights); !s) {
      state.SkipWithError(s.error().message.c_str());
      return;
    }
  }
  const std::vector<float> x = random_activations(n_tokens * shape.cols);
  std::vector<float> y(n_tokens * shape.rows);
  QuantizedActivations xq;
  const GgmlType types[] = {type};
  if (Status s = xq.quantize_all(x.data(), n_tokens, shape.cols, types); !s) {
    state.SkipWithError(s.error().message.c_str());
    return;
  }
  MatmulProblem problem{type, weights, shape.rows, shape.cols, x.data(), n_tokens, y.data(), &xq};
  problem.layout = layout;
  for (auto _ : state) {
    fn(problem, 0, shape.rows);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double ops = 2.0 * static_cast<double>(shape.rows * shape.cols * n_tokens);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(weights.size()));
  if (n_tokens > 1) {
    state.counters["GOP/s"] = benchmark::Counter(ops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["tokens/s"] =
        benchmark::Counter(static_cast<double>(n_tokens), benchmark::Counter::kIsIterationInvariantRate);
  }
}

void run_quantize(benchmark::State& state, GgmlType type, size_t cols, size_t n_tokens) {
  const std::vector<float> x = random_activations(n_tokens * cols);
  QuantizedActivations xq;
  const GgmlType types[] = {type};
  for (auto _ : state) {
    if (Status s = xq.quantize_all(x.data(), n_tokens, cols, types); !s) {
      state.SkipWithError(s.error().message.c_str());
      return;
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n_tokens * cols * sizeof(float)));
}

bool wanted(GgmlType type) { return std::find(std::begin(kTypes), std::end(kTypes), type) != std::end(kTypes); }

std::string shape_name(Shape shape) { return std::to_string(shape.rows) + "x" + std::to_string(shape.cols); }

void register_all() {
  for (const MatmulVariant& variant : compiled_matmul_variants()) {
    if (variant.available && !variant.available()) continue;
    for (const MatmulKernel& kernel : variant.kernels()) {
      if (!wanted(kernel.type)) continue;
      const std::string prefix = std::string(ggml_type_name(kernel.type)) + "/" + std::string(variant.name) + "/";
      for (const Shape shape : kShapes) {
        benchmark::RegisterBenchmark(("matvec/" + prefix + shape_name(shape)).c_str(), run_matmul, kernel.fn,
                                     kernel.type, shape, size_t{1}, WeightLayout::rows)
            ->Unit(benchmark::kMicrosecond);
        if (!kernel.reads_interleaved) continue;
        const std::string repacked =
            std::string(ggml_type_name(kernel.type)) + "/" + std::string(variant.name) + "+repack/";
        benchmark::RegisterBenchmark(("matvec/" + repacked + shape_name(shape)).c_str(), run_matmul, kernel.fn,
                                     kernel.type, shape, size_t{1}, WeightLayout::interleaved8)
            ->Unit(benchmark::kMicrosecond);
      }
      if (variant.name == "scalar") continue;
      for (const Shape shape : kShapes) {
        for (size_t n : kBatchTokens) {
          const std::string name = "matmul/" + prefix + shape_name(shape) + "/t" + std::to_string(n);
          benchmark::RegisterBenchmark(name.c_str(), run_matmul, kernel.fn, kernel.type, shape, n, WeightLayout::rows)
              ->Unit(benchmark::kMillisecond);
          if (!kernel.reads_interleaved) continue;
          const std::string repacked = "matmul/" + std::string(ggml_type_name(kernel.type)) + "/" +
                                       std::string(variant.name) + "+repack/" + shape_name(shape) + "/t" +
                                       std::to_string(n);
          benchmark::RegisterBenchmark(repacked.c_str(), run_matmul, kernel.fn, kernel.type, shape, n,
                                       WeightLayout::interleaved8)
              ->Unit(benchmark::kMillisecond);
        }
      }
    }
  }
  for (GgmlType type : {GgmlType::Q8_0, GgmlType::Q4_K}) {
    const std::string format = type == GgmlType::Q8_0 ? "q8" : "q8k";
    for (size_t cols : {2048, 8192}) {
      for (size_t n : {1, 128}) {
        const std::string name = "quantize/" + format + "/" + std::to_string(cols) + "/t" + std::to_string(n);
        benchmark::RegisterBenchmark(name.c_str(), run_quantize, type, cols, n)->Unit(benchmark::kMicrosecond);
      }
    }
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
