#include "bench/llama_bench/context_setup.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string_view>

#include "kernels/cuda/cuda_devices.h"
#include "kernels/ggml_type.h"

namespace infertune {
namespace {

// /proc/meminfo's MemAvailable in bytes; nullopt where it cannot be read (then nothing is checked).
std::optional<uint64_t> available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

double gib(uint64_t bytes) { return double(bytes) / double(1ull << 30); }

}  // namespace

Status check_engine_support(const BenchTest& test) {
  // A test that asks for GPU layers measures the GPU; without one it is an error row, not CPU numbers
  // under an -ngl label (run and the sweep's trials fall back to the CPU with a warning instead).
  const int ngl = test.settings.n_gpu_layers;
  if (const std::string why = ngl != 0 ? no_cuda_gpu_reason() : ""; !why.empty()) {
    return fail("-ngl {}: {} (use -ngl 0)", ngl, why);
  }
  return {};
}

uint64_t kv_cache_bytes(const ModelConfig& config, const BenchTest& test) {
  // One K row and one V row (every KV head) per layer and cell, in the cache's types (kv_storage.h).
  auto row = [&](GgmlType type, uint32_t head_dim) -> uint64_t {
    auto bytes = ggml_row_bytes(type, uint64_t(config.n_head_kv) * head_dim);
    return bytes ? *bytes : uint64_t(config.n_head_kv) * head_dim * sizeof(float);
  };
  const ContextParams& c = test.settings.context;
  const uint64_t per_cell =
      uint64_t(config.n_layers) * (row(c.type_k, config.head_dim) + row(c.type_v, config.head_dim_v));
  return per_cell * uint64_t(std::max(test.n_ctx(), 0));
}

Status check_context_fits(const ModelConfig& config, const BenchTest& test) {
  const auto available = available_memory_bytes();
  const uint64_t needed = kv_cache_bytes(config, test);
  if (available && needed > *available) {
    return fail("the KV cache of {} positions needs {:.2f} GiB, more than the {:.2f} GiB of memory available",
                test.n_ctx(), gib(needed), gib(*available));
  }
  return {};
}

Result<PlacedContext> make_test_context(const Model& model, const BenchTest& test, GpuWeightCache* gpu_weights) {
  EngineSettings settings = test.settings;
  settings.context.gpu_weights = gpu_weights;
  settings.context.n_ctx = static_cast<uint32_t>(test.n_ctx());
  return make_context(model, settings);
}

}  // namespace infertune
