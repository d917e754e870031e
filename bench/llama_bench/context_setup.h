#pragma once
// From a bench test to the engine, and the checks that turn what the engine cannot do into an error row
// instead of a crash: -ngl without a CUDA GPU, a KV cache larger than the memory available.
#include <cstdint>

#include "bench/llama_bench/test_matrix.h"
#include "engine/gpu/gpu_weight_cache.h"
#include "engine/model/model_config.h"
#include "engine/settings/make_context.h"
#include "kernels/result.h"

namespace infertune {

// The checks that need no model: -ngl other than 0 needs a visible CUDA GPU. Errors name the flag.
Status check_engine_support(const BenchTest& test);

// Bytes the KV cache of `test`'s context (n_depth + n_prompt + n_gen positions) takes.
uint64_t kv_cache_bytes(const ModelConfig& config, const BenchTest& test);

// An error when that KV cache is larger than the memory the OS reports available (MemAvailable), so a
// context that cannot fit fails with a message rather than the process being killed.
Status check_context_fits(const ModelConfig& config, const BenchTest& test);

// The placed pool and Context of one test (make_context): its settings with n_ctx = the positions it needs,
// the offloaded layers' weights taken from (and kept in) `gpu_weights` when given.
Result<PlacedContext> make_test_context(const Model& model, const BenchTest& test,
                                        GpuWeightCache* gpu_weights = nullptr);

}  // namespace infertune
