#pragma once
// From a bench test to the engine's ContextParams, and the checks that turn what the engine cannot do
// into an error row instead of a crash: -ngl > 0 without a GPU backend, a KV cache type the Context does
// not offer, a KV cache larger than the memory available. This is the one place that knows which
// ContextParams fields exist.
#include <cstdint>
#include <string>
#include <vector>

#include "bench/llama_bench/test_matrix.h"
#include "engine/context/context.h"
#include "engine/model/model_config.h"
#include "engine/threading/placement.h"
#include "kernels/result.h"

namespace infertune {

// The KV cache types the Context accepts for -ctk / -ctv, and the one bench uses when they are absent
// (llama-bench's f16).
std::vector<std::string> supported_kv_types();
std::string default_kv_type();

// The checks that need no model: -ngl, -ctk / -ctv. Errors name the flag.
Status check_engine_support(const BenchTest& test);

// Bytes the KV cache of `test`'s context (n_depth + n_prompt + n_gen positions) takes.
uint64_t kv_cache_bytes(const ModelConfig& config, const BenchTest& test);

// An error when that KV cache is larger than the memory the OS reports available (MemAvailable), so a
// context that cannot fit fails with a message rather than the process being killed.
Status check_context_fits(const ModelConfig& config, const BenchTest& test);

FlashAttention engine_flash_attention(FlashAttn mode);

// The Context of one test on `pool`, whose plan is `plan`: -t for both one-token and batch steps (as
// llama-bench), -b, -ub, -ctk, -ctv, -fa. The test must have passed check_engine_support.
ContextParams context_params(const BenchTest& test, const PlacementPlan& plan, ThreadPool* pool);

}  // namespace infertune
