// A measurement, not a check: one Generate trial and one Batched np 4 trial on the model that
// INFERTUNE_TRIAL_MODEL names (e.g. a synthesized llama-1b q4_0), printing the means of their samples (and
// a pp128 and a batched np 1 trial, whose times size the default sweep).
// Skipped without it: the suite never depends on a large model or on speed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <tuple>
#include <vector>

#include "engine/model/model.h"
#include "sweeps/store/statistics.h"
#include "sweeps/trial/trial_executor.h"

namespace infertune {
namespace {

// INFERTUNE_TRIAL_THREADS: -t of the trials (default 0: the physical cores).
int threads() {
  const char* t = std::getenv("INFERTUNE_TRIAL_THREADS");
  return t ? std::atoi(t) : 0;
}

nlohmann::json trial_config(const nlohmann::json& workload, int n_ctx, int n_parallel) {
  return {{"model", ""},          {"quant", ""},        {"n_gpu_layers", 0},    {"mmap", true},
          {"threads", threads()}, {"threads_batch", 0}, {"numa", "none"},       {"cpu_mask", "0x0"},
          {"n_ctx", n_ctx},       {"n_batch", 2048},    {"n_ubatch", 512},      {"n_parallel", n_parallel},
          {"type_k", "f16"},      {"type_v", "f16"},    {"flash_attn", "auto"}, {"workload", workload}};
}

void print_means(const char* title, const TrialMeasurement& m, double seconds) {
  std::map<std::string, std::vector<double>> values;
  for (const Sample& s : m.samples) {
    if (!s.is_warmup) values[s.metric].push_back(s.value);
  }
  std::printf("%s: %d repetitions (ci target %s), %.1f s with the warmup\n", title, m.repetitions,
              m.ci_target_met ? "met" : "not met", seconds);
  for (auto& [metric, v] : values) {
    std::sort(v.begin(), v.end());
    std::printf("  %-16s n %4zu  mean %12.4f  p50 %12.4f\n", metric.c_str(), v.size(), mean(v),
                percentile_of_sorted(v, 0.5));
  }
}

TEST(TrialMeasure, GenerateAndBatchedOnANamedModel) {
  const char* path = std::getenv("INFERTUNE_TRIAL_MODEL");
  if (!path || !*path) GTEST_SKIP() << "INFERTUNE_TRIAL_MODEL does not name a model to measure";
  auto model = Model::load(path);
  ASSERT_TRUE(model) << model.error().message;
  const TrialSettings settings{.warmup = true, .min_reps = 3, .max_reps = 5, .ci_target = 0.03};
  // Workloads like the default sweep's (sweeps/trial/default_sweep.h), each trial timed whole to size it.
  const std::vector<std::tuple<const char*, nlohmann::json, int, int>> trials = {
      {"tg32", {{"kind", "tg"}, {"n_prompt", 0}, {"n_gen", 32}, {"depth", 0}, {"n_parallel", 1}}, 32, 1},
      {"batched np4 pp64+tg16",
       {{"kind", "batched"}, {"n_prompt", 64}, {"n_gen", 16}, {"depth", 0}, {"n_parallel", 4}},
       4 * 80,
       4},
      {"pp128", {{"kind", "pp"}, {"n_prompt", 128}, {"n_gen", 0}, {"depth", 0}, {"n_parallel", 1}}, 128, 1},
      {"batched np1 pp64+tg16",
       {{"kind", "batched"}, {"n_prompt", 64}, {"n_gen", 16}, {"depth", 0}, {"n_parallel", 1}},
       80,
       1},
  };
  for (const auto& [name, workload, n_ctx, n_parallel] : trials) {
    const auto start = std::chrono::steady_clock::now();
    auto m = run_trial(*model, trial_config(workload, n_ctx, n_parallel), settings, {});
    ASSERT_TRUE(m) << name << ": " << m.error().message;
    print_means(name, *m, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
}

}  // namespace
}  // namespace infertune
