// `sweep --shard I/N`: the slices of a plan are disjoint and cover it, are balanced overall and within every
// reload group, do not depend on the run order (--order), and keep each trial in its run order.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "fake_model_shape.h"
#include "sweeps/plan/shard_plan.h"
#include "sweeps/plan/trial_plan.h"
#include "sweeps/spec/spec_yaml.h"

namespace infertune {
namespace {

SweepPlan plan_of(const std::string& yaml) {
  auto text = parse_spec_yaml(yaml, "spec.yaml");
  EXPECT_TRUE(text) << text.error().message;
  auto spec = resolve_spec(*text);
  EXPECT_TRUE(spec) << spec.error().message;
  auto plan = plan_sweep(*spec, test::fake_model_shapes());
  EXPECT_TRUE(plan) << plan.error().message;
  return *plan;
}

// Three models (reload groups) of 12, plus skipped trials (a context under min_ctx), 54 trials in all.
constexpr const char* kSpec = R"(models: [a.gguf, b.gguf, c.gguf]
threads: [1, 2, 3]
ubatch_size: [16, 32]
ctx_size: [0, 64, 4096]
workloads:
  - {pp: 32}
min_ctx: 128
)";

std::set<std::string> hashes(const SweepPlan& plan) {
  std::set<std::string> out;
  for (const PlannedTrial& t : plan.trials) out.insert(t.hash);
  return out;
}

TEST(ShardPlan, SlicesAreDisjointCoverThePlanAndAreBalanced) {
  const SweepPlan plan = plan_of(kSpec);
  ASSERT_EQ(plan.groups.size(), 3u);
  ASSERT_GT(plan.n_skipped(), 0u);
  for (int n = 1; n <= 7; ++n) {
    std::set<std::string> seen;
    size_t smallest = plan.trials.size(), largest = 0;
    for (int i = 1; i <= n; ++i) {
      const SweepPlan slice = shard_of(plan, ShardSlice{.index = i, .count = n});
      EXPECT_EQ(slice.spec_hash, plan.spec_hash);
      for (const PlannedTrial& t : slice.trials) EXPECT_TRUE(seen.insert(t.hash).second) << "trial in two slices";
      smallest = std::min(smallest, slice.trials.size());
      largest = std::max(largest, slice.trials.size());
      // Every slice holds its share of each group (18 trials each): floor(18 / n) of them at least.
      EXPECT_EQ(slice.groups.size(), plan.groups.size());
      for (const TrialGroup& g : slice.groups) EXPECT_GE(g.trials.size(), 18u / n);
    }
    EXPECT_EQ(seen, hashes(plan)) << n << " slices";
    EXPECT_LE(largest - smallest, 1u) << n << " slices";
  }
}

TEST(ShardPlan, ASliceIsTheSameWhateverTheRunOrder) {
  const SweepPlan grouped = plan_of(kSpec);
  const SweepPlan shuffled = plan_of(std::string(kSpec) + "order: random:7\n");
  const SweepPlan interleaved = plan_of(std::string(kSpec) + "order: interleaved\n");
  for (int i = 1; i <= 4; ++i) {
    const ShardSlice slice{.index = i, .count = 4};
    EXPECT_EQ(hashes(shard_of(grouped, slice)), hashes(shard_of(shuffled, slice)));
    EXPECT_EQ(hashes(shard_of(grouped, slice)), hashes(shard_of(interleaved, slice)));
  }
}

TEST(ShardPlan, ASliceKeepsTheRunOrderAndIndexesItself) {
  const SweepPlan plan = plan_of(std::string(kSpec) + "order: random:3\n");
  const SweepPlan slice = shard_of(plan, ShardSlice{.index = 2, .count = 3});
  std::map<std::string, size_t> position;
  for (const PlannedTrial& t : plan.trials) position[t.hash] = t.index;
  for (size_t i = 0; i < slice.trials.size(); ++i) {
    EXPECT_EQ(slice.trials[i].index, i);
    EXPECT_EQ(slice.groups[slice.trials[i].group].trials.size() > 0, true);
    if (i > 0) {
      EXPECT_LT(position[slice.trials[i - 1].hash], position[slice.trials[i].hash]);
    }
  }
  size_t in_groups = 0;
  for (const TrialGroup& g : slice.groups) {
    for (size_t t : g.trials) EXPECT_EQ(&slice.groups[slice.trials[t].group], &g);
    in_groups += g.trials.size();
  }
  EXPECT_EQ(in_groups, slice.trials.size());
}

TEST(ShardPlan, ParsesIOverNAndNamesTheFlagOtherwise) {
  auto s = parse_shard("2/3", "--shard");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 3);
  EXPECT_EQ(s->text(), "2/3");
  for (const char* bad : {"", "3", "0/3", "4/3", "1/0", "a/b", "1/3x", "-1/3", "1/100000"}) {
    auto r = parse_shard(bad, "--shard");
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("--shard '"), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace infertune
