// The built-in default sweep: its dimensions, its models (a llama-1b shape in three types, a smaller one on
// small hosts), and that it plans, against the real header of a tiny synthesized model.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "engine/synth/presets.h"
#include "sweeps/plan/trial_plan.h"
#include "sweeps/trial/default_sweep.h"
#include "test_support.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kGiB = 1ull << 30;

TEST(TrialDefaultSweep, ThreadsRunFromOneToTheCores) {
  EXPECT_EQ(default_sweep_threads(1), (std::vector<int>{1}));
  EXPECT_EQ(default_sweep_threads(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(default_sweep_threads(6), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(default_sweep_threads(16), (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(default_sweep_threads(0), (std::vector<int>{1}));
}

TEST(TrialDefaultSweep, HasTheDimensionsAndModels) {
  const fs::path cache = "/cache/models";
  const DefaultSweep sweep = default_sweep(2, 16 * kGiB, cache);
  const SweepSpec& s = sweep.spec;
  ASSERT_EQ(sweep.models.size(), 2u);
  ASSERT_EQ(s.models.size(), 2u);
  std::set<std::string> types;
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(s.models[i], sweep.models[i].path);
    EXPECT_EQ(fs::path(s.models[i]).parent_path(), cache);
    EXPECT_EQ(sweep.models[i].request.config, find_synth_preset("llama-1b")->config);
    types.insert(std::string(sweep.models[i].request.file_type.name));
  }
  EXPECT_EQ(types, (std::set<std::string>{"q4_k_m", "q8_0"}));
  ASSERT_TRUE(s.time_budget_s);  // the out-of-the-box run keeps to it
  EXPECT_EQ(*s.time_budget_s, kDefaultSweepTimeBudgetSeconds);
  EXPECT_EQ(s.settings.at("threads"), (std::vector<std::string>{"1", "2"}));
  EXPECT_GE(s.settings.at("batch_size").size() * s.settings.at("ubatch_size").size(), 2u);
  std::set<std::string> workloads;
  for (const Workload& w : s.workloads) workloads.insert(w.name());
  EXPECT_EQ(workloads, (std::set<std::string>{"pp128", "tg32", "batched np1 pp32+tg16", "batched np4 pp32+tg16"}));
}

TEST(TrialDefaultSweep, SmallHostsGetASmallerModel) {
  const DefaultSweep sweep = default_sweep(2, 4 * kGiB, "/cache");
  ASSERT_FALSE(sweep.models.empty());
  const ModelConfig& small = sweep.models[0].request.config;
  const ModelConfig& large = find_synth_preset("llama-1b")->config;
  EXPECT_LT(uint64_t(small.n_layers) * small.n_embd * small.n_ff, uint64_t(large.n_layers) * large.n_embd * large.n_ff);
}

TEST(TrialDefaultSweep, PlansWithRealShapes) {
  // Every model of the sweep given the header of one tiny synthesized file (the real ones are ~1 GB).
  const fs::path dir = test::temp_dir();
  const fs::path tiny = dir / "tiny.gguf";
  const SynthRequest request{.config = find_synth_preset("tiny")->config,
                             .preset = "tiny",
                             .file_type = *file_type_from_name("q8_0"),
                             .mix = {}};
  ASSERT_TRUE(synthesize_once(request, tiny));
  const DefaultSweep sweep = default_sweep(2, 16 * kGiB, dir);
  const ModelShapeFn real = gguf_model_shapes();
  auto plan =
      plan_sweep(sweep.spec, [&](const std::string&, const std::string& quant) { return real(tiny.string(), quant); });
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->groups.size(), 2u);
  EXPECT_EQ(plan->n_skipped(), 0u);
  // 2 models x 2 threads x (pp128 and batched np4 at 2 -ub; tg32 and batched np1, whose decodes never
  // exceed 32 tokens, once each).
  EXPECT_EQ(plan->trials.size(), 2u * 2 * (2 + 2 + 1 + 1));
  std::set<std::string> models;
  for (const PlannedTrial& t : plan->trials) models.insert(t.config["model"]);
  EXPECT_EQ(models, std::set<std::string>(sweep.spec.models.begin(), sweep.spec.models.end()));
}

TEST(TrialDefaultSweep, ProducesItsModelsOnce) {
  // A sweep whose models are tiny, to check production without writing gigabytes.
  const fs::path dir = test::temp_dir();
  DefaultSweep sweep = default_sweep(2, 16 * kGiB, dir);
  for (auto& m : sweep.models) m.request.config = find_synth_preset("tiny")->config;
  std::set<size_t> reported;
  ASSERT_TRUE(produce_default_models(sweep, [&](size_t i, const SynthProgress&) { reported.insert(i); }));
  EXPECT_EQ(reported, (std::set<size_t>{0, 1}));
  for (const auto& m : sweep.models) EXPECT_TRUE(fs::exists(m.path)) << m.path;
  reported.clear();
  ASSERT_TRUE(produce_default_models(sweep, [&](size_t i, const SynthProgress&) { reported.insert(i); }));
  EXPECT_TRUE(reported.empty());
}

}  // namespace
}  // namespace infertune
