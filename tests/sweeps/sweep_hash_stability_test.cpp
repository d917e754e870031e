// The spec hash and the trial config hashes are stored in results stores and matched by --resume, so the
// same spec must give the same hashes in every version: these were computed before the sweep's settings
// came from the settings table (engine/settings/settings_table.h) and must not change with it.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_model_shape.h"
#include "sweeps/plan/trial_plan.h"
#include "sweeps/spec/config_fields.h"
#include "sweeps/spec/spec_yaml.h"
#include "sweeps/store/stable_hash.h"

namespace infertune {
namespace {

// Every dimension given more than one value where it may, the constraints and every workload kind.
constexpr const char* kSpec = R"(models: [a.gguf, b.gguf]
n_gpu_layers: [0, -1]
threads: [0, 2]
threads_batch: [0, 3]
numa: [none, distribute]
cpu_mask: ["0x0", "0xF"]
ctx_size: [0, 512]
batch_size: [64, 128]
ubatch_size: [32, 64]
parallel: [1, 2]
cache_type_k: [F16, q8_0]
cache_type_v: q4_0
flash_attn: [on, auto]
mmap: [1, 0]
workloads:
  - {pp: 64}
  - {tg: 16, depth: 32}
  - {pp: 16, tg: 8}
  - {np: [1, 4], pp: 16, tg: 8}
max_mem: 64M
min_ctx: 64
time_budget: 30m
order: random:3
)";

struct Hashes {
  std::string spec;
  std::string trials;  // of the sorted trial hashes: the set, whatever the run order
  std::string groups;  // of the group keys, sorted
  size_t n_trials = 0;
};

Hashes hashes_of(const std::string& yaml) {
  auto text = parse_spec_yaml(yaml, "spec.yaml");
  EXPECT_TRUE(text) << text.error().message;
  auto spec = resolve_spec(*text);
  EXPECT_TRUE(spec) << spec.error().message;
  auto plan = plan_sweep(*spec, test::fake_model_shapes());
  EXPECT_TRUE(plan) << plan.error().message;
  std::vector<std::string> trials, groups;
  for (const PlannedTrial& t : plan->trials) trials.push_back(t.hash);
  for (const TrialGroup& g : plan->groups) groups.push_back(g.key.dump());
  std::ranges::sort(trials);
  std::ranges::sort(groups);
  return {.spec = spec->hash(),
          .trials = config_hash(nlohmann::json(trials)),
          .groups = config_hash(nlohmann::json(groups)),
          .n_trials = trials.size()};
}

TEST(SweepHashStability, SpecAndTrialHashesAreThoseStoredBefore) {
  const Hashes h = hashes_of(kSpec);
  EXPECT_EQ(h.spec, "9a282b51d4566041");
  EXPECT_EQ(h.trials, "3c7a59254cd8528b");
  EXPECT_EQ(h.groups, "992ab22a71d9bfc7");
  EXPECT_EQ(h.n_trials, 11264u);
}

TEST(SweepHashStability, DefaultsHashAsBefore) {
  const Hashes h = hashes_of("models: m.gguf\n");
  EXPECT_EQ(h.spec, "dd62f848f4b26257");
  EXPECT_EQ(h.trials, "03063cccf0cb83e6");
  EXPECT_EQ(h.groups, "57448ce45cf412a2");
  EXPECT_EQ(h.n_trials, 2u);
}

// --poll joined the sweep after schema v2 as one table entry: at its default it is in no hash (the spec above
// and old stores keep theirs), set it is stored in the trial and read back into the engine's settings.
TEST(SweepHashStability, ASettingAddedLaterIsStoredOnlyWhenSet) {
  EXPECT_EQ(hashes_of("models: m.gguf\npoll: 50\n").spec, "dd62f848f4b26257");
  auto text = parse_spec_yaml("models: m.gguf\npoll: [0, 50]\nworkloads: [{tg: 4}]\n", "spec.yaml");
  ASSERT_TRUE(text) << text.error().message;
  auto spec = resolve_spec(*text);
  ASSERT_TRUE(spec) << spec.error().message;
  auto plan = plan_sweep(*spec, test::fake_model_shapes());
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->trials.size(), 2u);
  std::vector<int> polls;
  for (const PlannedTrial& t : plan->trials) {
    EXPECT_EQ(t.config.contains("poll"), t.config.value("poll", 50) != 50) << t.config.dump();
    auto settings = read_config_fields(t.config);
    ASSERT_TRUE(settings) << settings.error().message;
    polls.push_back(settings->placement.poll);
  }
  std::ranges::sort(polls);
  EXPECT_EQ(polls, (std::vector<int>{0, 50}));
}

}  // namespace
}  // namespace infertune
