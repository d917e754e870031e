// Micro-benchmarks of the per-token ops (kernels/ops) for every ops variant this CPU runs, at the shapes of
// 1B and 8B llama models (n_embd 2048 / 4096, n_ff 8192 / 14336, 32 heads of 64 / 128), and of activation
// quantization (q8 / q8_K rows, kernels/matmul/activation_quant.h), single thread.
//
// bytes_per_second counts the bytes each call reads plus the bytes it writes (an encoded embedding row counts
// its encoded bytes; activation quantization counts only the floats it reads, the convention of a
// quantizer's throughput). The data stays in cache, so this is the kernel's speed, not DRAM's.
// Names: op/<variant>/<shape>; each benchmark's label is its variant. Filter as usual:
// --benchmark_filter=softmax, --benchmark_format=json.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/ggml_type.h"
#include "kernels/matmul/activation_quant.h"
#include "kernels/ops/ops_kernels.h"
#include "kernels/quant.h"

namespace infertune {
namespace {

std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

void finish(benchmark::State& state, const OpsKernels& k, size_t bytes_per_call) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes_per_call));
  state.SetLabel(std::string(k.variant));
}

// x, gain: [n] read, out: [n] written.
void bm_rms_norm(benchmark::State& state, const OpsKernels* k, size_t n) {
  const auto x = random_values(n, 1), gain = random_values(n, 2);
  std::vector<float> out(n);
  for (auto _ : state) {
    k->rms_norm(x.data(), gain.data(), 1e-5f, n, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  finish(state, *k, 3 * n * sizeof(float));
}

// One token's 32 query heads of head_dim rotated in place with one position's angles.
void bm_rope(benchmark::State& state, const OpsKernels* k, size_t head_dim, bool neox) {
  constexpr size_t kHeads = 32;
  const size_t n_pairs = head_dim / 2;
  auto q = random_values(kHeads * head_dim, 3);
  std::vector<float> cos(n_pairs), sin(n_pairs);
  for (size_t i = 0; i < n_pairs; ++i) {
    cos[i] = std::cos(0.1f * static_cast<float>(i));
    sin[i] = std::sin(0.1f * static_cast<float>(i));
  }
  for (auto _ : state) {
    for (size_t h = 0; h < kHeads; ++h) k->rope_rotate(q.data() + h * head_dim, cos.data(), sin.data(), n_pairs, neox);
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  finish(state, *k, (2 * kHeads * head_dim + 2 * n_pairs) * sizeof(float));
}

// One attention row of n_keys scores, in place (read by the max, exp and scaling passes, written by the last two). The
// row is not restored between calls: the SIMD exp costs the same for any input, and so does glibc's expf within the
// range of scores, while a copy per call would be timed too.
void bm_softmax(benchmark::State& state, const OpsKernels* k, size_t n_keys) {
  auto x = random_values(n_keys, 4, 3.0f);
  for (auto _ : state) {
    k->softmax(x.data(), n_keys);
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  finish(state, *k, 5 * n_keys * sizeof(float));
}

// gate, up: [n_ff] read, out (= gate, as in the engine) written.
void bm_silu_mul(benchmark::State& state, const OpsKernels* k, size_t n_ff) {
  const auto gate = random_values(n_ff, 5, 2.0f), up = random_values(n_ff, 6);
  std::vector<float> out(n_ff);
  for (auto _ : state) {
    k->silu_mul(gate.data(), up.data(), n_ff, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  finish(state, *k, 3 * n_ff * sizeof(float));
}

// The residual add x += y over n_embd.
void bm_add(benchmark::State& state, const OpsKernels* k, size_t n) {
  auto x = random_values(n, 7);
  const auto y = random_values(n, 8, 1e-6f);
  for (auto _ : state) {
    k->add(x.data(), y.data(), n);
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  finish(state, *k, 3 * n * sizeof(float));
}

// One embedding row of n_embd values decoded; the reference codec when the variant has no decoder.
void bm_embedding(benchmark::State& state, const OpsKernels* k, GgmlType type, size_t n) {
  std::vector<std::byte> row(*ggml_row_bytes(type, n));
  (void)quantize_row(type, random_values(n, 9), row);
  std::vector<float> out(n);
  const DequantRowFn decode = k->dequant_row(type);
  for (auto _ : state) {
    if (decode) {
      decode(row.data(), out.data(), n);
    } else {
      (void)dequantize_row(type, row, out);
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  finish(state, *k, row.size() + n * sizeof(float));
}

// n_tokens rows of n_cols activations quantized row by row with the matmul's building blocks (GB/s of floats
// read). matmul_bench's quantize/ benchmarks time the whole matmul input (rows and token panels).
// With one token the same row is quantized on every call, so the branch predictor learns it: the x128
// figures are the ones to trust for the (branchy) baseline quantizer.
template <bool kSuper>
void bm_act_quant(benchmark::State& state, size_t n_cols, size_t n_tokens) {
  const auto x = random_values(n_cols * n_tokens, 10);
  std::vector<int8_t> codes(n_cols);
  std::vector<float> d(n_cols / 32), dsum(n_cols / 32);
  std::vector<kquant::BlockQ8K> blocks(n_cols / kquant::kSuperBlock);
  for (auto _ : state) {
    for (size_t t = 0; t < n_tokens; ++t) {
      if constexpr (kSuper) {
        quantize_row_q8k(x.data() + t * n_cols, n_cols, blocks.data());
      } else {
        quantize_row_q8(x.data() + t * n_cols, n_cols, codes.data(), d.data(), dsum.data());
      }
    }
    benchmark::DoNotOptimize(codes.data());
    benchmark::DoNotOptimize(blocks.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(x.size() * sizeof(float)));
  // One implementation, compiled for baseline x86-64 (not dispatched by ISA).
  state.SetLabel("baseline");
}

template <class... Args>
void add(const std::string& name, Args&&... args) {
  benchmark::RegisterBenchmark(name.c_str(), std::forward<Args>(args)...)->Unit(benchmark::kMicrosecond);
}

void register_all() {
  for (const OpsVariant& variant : available_ops_variants(compiled_ops_variants())) {
    const OpsKernels* k = &variant.kernels();
    const std::string v(variant.name);
    for (size_t n : {2048, 4096}) add("rms_norm/" + v + "/" + std::to_string(n), bm_rms_norm, k, n);
    for (size_t d : {64, 128}) {
      add("rope_interleaved/" + v + "/32x" + std::to_string(d), bm_rope, k, d, false);
      add("rope_neox/" + v + "/32x" + std::to_string(d), bm_rope, k, d, true);
    }
    for (size_t n : {512, 4096, 32768}) add("softmax/" + v + "/" + std::to_string(n), bm_softmax, k, n);
    for (size_t n : {8192, 14336}) add("silu_mul/" + v + "/" + std::to_string(n), bm_silu_mul, k, n);
    for (size_t n : {2048, 4096}) add("add/" + v + "/" + std::to_string(n), bm_add, k, n);
    for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::F16, GgmlType::BF16}) {
      for (size_t n : {2048, 4096}) {
        add("embedding/" + std::string(ggml_type_name(t)) + "/" + v + "/" + std::to_string(n), bm_embedding, k, t, n);
      }
    }
  }
  for (size_t n_cols : {2048, 4096, 8192, 14336}) {
    for (size_t n_tokens : {1, 128}) {
      const std::string shape = std::to_string(n_cols) + "x" + std::to_string(n_tokens);
      add("act_quant_q8/baseline/" + shape, bm_act_quant<false>, n_cols, n_tokens);
      add("act_quant_q8_K/baseline/" + shape, bm_act_quant<true>, n_cols, n_tokens);
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
