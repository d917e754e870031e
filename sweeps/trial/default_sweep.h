#pragma once
// `infertune sweep` with no arguments: a quick sweep on built-in synthetic models sized for the host, so
// the main job works out of the box (issue 6, "The main job out of the box").
//
// Models: the llama-1b preset (Llama-3.2-1B's shape; qwen2.5-0.5b on hosts with under 6 GiB of memory)
// synthesized once into the model cache (model_variants.h) as q4_0, q4_k_m and q8_0.
// Dimensions: threads 1, 2, 4, ... up to the physical cores (and the core count itself); -ub 32 and 128
// under -b 128 (a prompt of 128 is one -b piece either way; -ub decides the matmul batch); f16 KV cache;
// each trial's context just what its workload needs.
// Workloads: pp128, tg32, batched np 1 and np 4 (each request pp32 + tg16).
//
// Size: 3 models x 2 threads x (2 -ub for pp128 and batched np4; tg32 and batched np1 never decode more than 32
// tokens at once, so their -ub values coincide and run once) = 36 trials on a 2-core host (bigger hosts get more
// threads values: 1, 2, 4, ... and the core count). Time on a 2-core machine, estimated from the CPU time of the same
// workloads on llama-1b q4_0 measured on this project's 2-core VM (tests/sweeps/trial_measure_test.cpp; the
// VM was shared, so wall times were converted by the CPU share the process got): per run at 1 thread tg32
// 1.0 s, pp128 0.55 s, batched np4 (pp64) 2.0 s, np1 0.74 s; pp32 prompts cut the batched runs to ~1.5 s and
// ~0.6 s. A trial is a warmup + 3 repetitions (4 runs) when --ci-target 3% is met at the minimum: ~15 s per
// model and -ub at 1 thread, ~10 s at 2; q4_k_m costs ~1.1x and q8_0 ~1.5x q4_0 (its weights are 1.8x
// the bytes). So ~25 s x 3.6 x 2 = ~3 min for the trials, plus ~30 s to synthesize the three models once
// (33 s for one on the shared VM, ~10 s unshared) and their loads: ~3.5 min, leaving ~1.5 min for trials
// that need more repetitions.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "engine/synth/synthesizer.h"
#include "kernels/result.h"
#include "sweeps/spec/sweep_spec.h"
#include "sweeps/trial/model_variants.h"

namespace infertune {

struct DefaultSweepModel {
  std::string name;  // "llama-1b q4_0"
  std::string path;  // in the model cache
  SynthRequest request;
};

struct DefaultSweep {
  SweepSpec spec;                         // spec.models are the models' paths, in the same order
  std::vector<DefaultSweepModel> models;  // to produce before planning (plan_sweep reads their headers)
};

// Timed repetitions at most per trial of the default sweep (unless --max-reps says otherwise).
inline constexpr int kDefaultSweepMaxReps = 5;

// Hosts with less memory than this get the smaller preset.
inline constexpr uint64_t kDefaultSweepLargeModelMemory = 6ull << 30;

// 1, 2, 4, ... below `physical_cores`, then `physical_cores` (at least {1}).
std::vector<int> default_sweep_threads(unsigned physical_cores);

DefaultSweep default_sweep(unsigned physical_cores, uint64_t memory_bytes,
                           const std::filesystem::path& cache_dir = default_model_cache_dir());
SweepSpec default_sweep_spec(unsigned physical_cores, uint64_t memory_bytes,
                             const std::filesystem::path& cache_dir = default_model_cache_dir());

// Synthesizes the models of `sweep` that are not in the cache yet (each written atomically); `progress`
// gets the model's index in sweep.models with the synthesizer's progress.
using DefaultModelProgressFn = std::function<void(size_t model, const SynthProgress& progress)>;
Status produce_default_models(const DefaultSweep& sweep, const DefaultModelProgressFn& progress = {});

}  // namespace infertune
