#include "sweeps/trial/default_sweep.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/synth/presets.h"

namespace infertune {
namespace {

// The quantization most users run and the near-lossless one: the choice a first sweep should inform.
constexpr const char* kFileTypes[] = {"q4_k_m", "q8_0"};

std::vector<DefaultSweepModel> default_models(uint64_t memory_bytes, const std::filesystem::path& cache_dir) {
  const char* preset_name = memory_bytes >= kDefaultSweepLargeModelMemory ? "llama-1b" : "qwen2.5-0.5b";
  const SynthPreset* preset = find_synth_preset(preset_name);
  std::vector<DefaultSweepModel> models;
  if (!preset) return models;  // the presets table always has both
  for (const char* type : kFileTypes) {
    DefaultSweepModel m;
    m.name = fmt::format("{} {}", preset_name, type);
    m.path = (cache_dir / fmt::format("synthetic-{}-{}.gguf", preset_name, type)).string();
    m.request = SynthRequest{.config = preset->config,
                             .preset = std::string(preset_name),
                             .file_type = *file_type_from_name(type),
                             .mix = {},
                             .seed = 1,
                             .threads = 0};
    models.push_back(std::move(m));
  }
  return models;
}

}  // namespace

std::vector<int> default_sweep_threads(unsigned physical_cores) {
  const int cores = std::max(1, static_cast<int>(physical_cores));
  std::vector<int> threads;
  for (int t = 1; t < cores; t *= 2) threads.push_back(t);
  threads.push_back(cores);
  return threads;
}

DefaultSweep default_sweep(unsigned physical_cores, uint64_t memory_bytes, const std::filesystem::path& cache_dir) {
  DefaultSweep sweep;
  sweep.models = default_models(memory_bytes, cache_dir);
  SweepSpec& s = sweep.spec;
  for (const auto& m : sweep.models) s.models.push_back(m.path);
  std::vector<std::string> threads;
  for (int t : default_sweep_threads(physical_cores)) threads.push_back(std::to_string(t));
  s.settings["threads"] = std::move(threads);
  s.settings["batch_size"] = {"128"};
  s.settings["ubatch_size"] = {"32", "128"};
  s.workloads = {{.kind = WorkloadKind::Prompt, .n_prompt = 128},
                 {.kind = WorkloadKind::Generate, .n_gen = 32},
                 {.kind = WorkloadKind::Batched, .n_prompt = 32, .n_gen = 16, .n_parallel = 1},
                 {.kind = WorkloadKind::Batched, .n_prompt = 32, .n_gen = 16, .n_parallel = 4}};
  s.time_budget_s = kDefaultSweepTimeBudgetSeconds;
  return sweep;
}

SweepSpec default_sweep_spec(unsigned physical_cores, uint64_t memory_bytes, const std::filesystem::path& cache_dir) {
  return default_sweep(physical_cores, memory_bytes, cache_dir).spec;
}

Status produce_default_models(const DefaultSweep& sweep, const DefaultModelProgressFn& progress) {
  for (size_t i = 0; i < sweep.models.size(); ++i) {
    const DefaultSweepModel& m = sweep.models[i];
    SynthProgressFn each;
    if (progress) each = [&progress, i](const SynthProgress& p) { progress(i, p); };
    if (Status s = synthesize_once(m.request, m.path, each); !s) return fail("{}: {}", m.name, s.error().message);
  }
  return {};
}

}  // namespace infertune
