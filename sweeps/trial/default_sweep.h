#pragma once
// `infertune sweep` with no arguments: a quick sweep on built-in synthetic models sized for the host, so
// the main job works out of the box (issue 6, "The main job out of the box").
//
// Models: the llama-1b preset (Llama-3.2-1B's shape; qwen2.5-0.5b on hosts with under 6 GiB of memory)
// synthesized once into the model cache (model_variants.h) as q4_k_m and q8_0.
// Dimensions: threads 1, 2, 4, ... up to the physical cores (and the core count itself); -ub 32 and 128
// under -b 128 (a prompt of 128 is one -b piece either way; -ub decides the matmul batch); f16 KV cache;
// each trial's context just what its workload needs (the recommendation's command lines carry a context to
// serve, sweeps/recommend/serving_context.h).
// Workloads: pp128, tg32, batched np 1 and np 4 (each request pp32 + tg16).
//
// Size: 2 models x 2 threads x (2 -ub for pp128 and batched np4; tg32 and batched np1 never decode more than 32
// tokens at once, so their -ub values coincide and run once) = 24 trials on a 2-core host (bigger hosts get more
// threads values: 1, 2, 4, ... and the core count).
//
// Time: a time budget of 4 minutes for the whole command (kDefaultSweepTimeBudgetSeconds: the host probe and the
// models' synthesis included), which the runner keeps by cutting repetitions to --min-reps, then trials. Measured
// on this project's shared 2-core VM with three models (36 trials) from an empty cache: 38 s before the first
// trial (probe, 2.7 GB synthesized), 101 s for a model's 12 trials at up to 5 repetitions, 85 s at 3; the third
// model's 12 trials did not fit. Two models fit: about 40 + 100 + 85 s.
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

// The default sweep's time budget, for the whole command (its models' synthesis included): the runner cuts
// repetitions to --min-reps, then configurations, to keep it (sweep_runner.h), and says what it cut.
inline constexpr double kDefaultSweepTimeBudgetSeconds = 240;

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
