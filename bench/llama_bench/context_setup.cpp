#include "bench/llama_bench/context_setup.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string_view>

#include "engine/kv/kv_storage.h"
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

std::vector<std::string> supported_kv_types() {
  std::vector<std::string> names;
  for (GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0}) {
    if (kv_type_from_name(ggml_type_name(type))) names.emplace_back(ggml_type_name(type));
  }
  return names;
}

// llama-bench's default.
std::string default_kv_type() { return "f16"; }

Status check_engine_support(const BenchTest& test) {
  if (test.n_gpu_layers > 0) {
    return fail("-ngl {}: this build has no GPU backend for the forward pass (the engine runs on the CPU; use -ngl 0)",
                test.n_gpu_layers);
  }
  for (const auto& [flag, type] : {std::pair{"-ctk", test.type_k}, std::pair{"-ctv", test.type_v}}) {
    if (auto kv = kv_type_from_name(type); !kv) return fail("{} {}: {}", flag, type, kv.error().message);
  }
  return {};
}

uint64_t kv_cache_bytes(const ModelConfig& config, const BenchTest& test) {
  // One K row and one V row (every KV head) per layer and cell, in the cache's types (kv_storage.h).
  auto row = [&](const std::string& name, uint32_t head_dim) -> uint64_t {
    auto type = kv_type_from_name(name);
    auto bytes = type ? ggml_row_bytes(*type, uint64_t(config.n_head_kv) * head_dim) : std::nullopt;
    return bytes ? *bytes : uint64_t(config.n_head_kv) * head_dim * sizeof(float);
  };
  const uint64_t per_cell =
      uint64_t(config.n_layers) * (row(test.type_k, config.head_dim) + row(test.type_v, config.head_dim_v));
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

FlashAttention engine_flash_attention(FlashAttn mode) {
  switch (mode) {
    case FlashAttn::on:
      return FlashAttention::On;
    case FlashAttn::off:
      return FlashAttention::Off;
    case FlashAttn::autodetect:
      break;
  }
  return FlashAttention::Auto;
}

ContextParams context_params(const BenchTest& test, const PlacementPlan& plan, ThreadPool* pool) {
  ContextParams params;
  params.n_ctx = static_cast<uint32_t>(test.n_ctx());
  params.n_threads = plan.n_threads;
  params.n_threads_batch = plan.n_threads;
  params.n_batch = static_cast<uint32_t>(test.n_batch);
  params.n_ubatch = static_cast<uint32_t>(test.n_ubatch);
  // check_engine_support has accepted both names.
  params.type_k = kv_type_from_name(test.type_k).value();
  params.type_v = kv_type_from_name(test.type_v).value();
  params.flash_attn = engine_flash_attention(test.flash_attn);
  params.pool = pool;
  return params;
}

}  // namespace infertune
