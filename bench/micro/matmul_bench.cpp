// Matvec (n_tokens = 1) micro-benchmarks of every compiled matmul variant this CPU runs, per weight type, at
// Llama-3.2-1B shapes (rows x cols: 2048x2048 attention, 8192x2048 ffn up/gate, 2048x8192 ffn down), single
// thread. Reports weight bytes read per second (Google Benchmark's bytes_per_second): a matvec reads every
// weight byte once, so this is the kernel's effective bandwidth.
// Optional argument filter as usual: --benchmark_filter=q4_K.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_registry.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

constexpr GgmlType kTypes[] = {GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q8_0, GgmlType::Q4_0,   GgmlType::F16,
                               GgmlType::F32,  GgmlType::BF16, GgmlType::Q5_K, GgmlType::Q5_0,   GgmlType::Q4_1,
                               GgmlType::Q5_1, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS};

struct Shape {
  size_t rows, cols;
};
constexpr Shape kShapes[] = {{2048, 2048}, {8192, 2048}, {2048, 8192}};

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

void run_matvec(benchmark::State& state, MatmulFn fn, GgmlType type, Shape shape) {
  const std::vector<std::byte> weights = make_weights(type, shape.rows, shape.cols);
  std::mt19937 rng(3);
  std::normal_distribution<float> dist;
  std::vector<float> x(shape.cols);
  for (float& v : x) v = dist(rng);
  std::vector<float> y(shape.rows);
  const MatmulProblem problem{type, weights, shape.rows, shape.cols, x.data(), 1, y.data()};
  for (auto _ : state) {
    fn(problem, 0, shape.rows);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(weights.size()));
}

void register_all() {
  for (const MatmulVariant& variant : compiled_matmul_variants()) {
    if (variant.available && !variant.available()) continue;
    for (const MatmulKernel& kernel : variant.kernels()) {
      bool wanted = false;
      for (GgmlType t : kTypes) wanted = wanted || t == kernel.type;
      if (!wanted) continue;
      for (const Shape shape : kShapes) {
        const std::string name = std::string("matvec/") + std::string(ggml_type_name(kernel.type)) + "/" +
                                 std::string(variant.name) + "/" + std::to_string(shape.rows) + "x" +
                                 std::to_string(shape.cols);
        benchmark::RegisterBenchmark(name.c_str(), run_matvec, kernel.fn, kernel.type, shape)
            ->Unit(benchmark::kMicrosecond);
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
