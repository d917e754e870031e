// Expanding a spec into trials: the product, reload groups, one hash per distinct configuration, the skips
// (memory, context, GPU) with their reasons, and the orders.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "fake_model_shape.h"
#include "sweeps/plan/plan_table.h"
#include "sweeps/plan/trial_plan.h"
#include "sweeps/spec/spec_yaml.h"
#include "sweeps/store/stable_hash.h"

namespace infertune {
namespace {

SweepSpec spec_of(const std::string& yaml) {
  auto text = parse_spec_yaml(yaml, "spec.yaml");
  EXPECT_TRUE(text) << text.error().message;
  auto spec = resolve_spec(*text);
  EXPECT_TRUE(spec) << spec.error().message;
  return *spec;
}

SweepPlan plan_of(const std::string& yaml) {
  auto plan = plan_sweep(spec_of(yaml), test::fake_model_shapes());
  EXPECT_TRUE(plan) << plan.error().message;
  return *plan;
}

TEST(SweepPlan, CartesianProductGroupedByReload) {
  const auto plan = plan_of(
      "models: [a.gguf, b.gguf]\nmmap: [1, 0]\nthreads: [1, 2]\nbatch_size: [16, 32]\n"
      "workloads:\n  - {pp: 64}\n  - {pp: 32, tg: 16}\n");
  // 2 models x 2 mmap = 4 groups; each 2 threads x 2 batch x 2 workloads = 8 trials.
  ASSERT_EQ(plan.groups.size(), 4u);
  ASSERT_EQ(plan.trials.size(), 32u);
  std::set<std::string> hashes;
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    EXPECT_EQ(plan.groups[g].trials.size(), 8u);
    for (size_t i : plan.groups[g].trials) {
      const PlannedTrial& t = plan.trials[i];
      EXPECT_EQ(t.group, g);
      EXPECT_EQ(t.index, i);
      EXPECT_EQ(t.hash, config_hash(t.config));
      // Every reload setting of the trial is its group's.
      for (const auto& [key, value] : plan.groups[g].key.items()) EXPECT_EQ(t.config[key], value) << key;
      hashes.insert(t.hash);
    }
  }
  EXPECT_EQ(hashes.size(), 32u);
  // Product order: the model outermost, the workload next, then the first dimension (threads).
  EXPECT_EQ(plan.groups[0].key["model"], "a.gguf");
  EXPECT_EQ(plan.groups[0].key["mmap"], true);
  EXPECT_EQ(plan.groups[1].key["mmap"], false);
  EXPECT_EQ(plan.groups[2].key["model"], "b.gguf");
  EXPECT_EQ(plan.trials[0].workload, "pp64");
  EXPECT_EQ(plan.trials[0].config["threads"], 1);
  EXPECT_EQ(plan.trials[0].config["n_batch"], 16);
  EXPECT_EQ(plan.trials[1].config["n_batch"], 32);
  EXPECT_EQ(plan.trials[2].config["threads"], 2);
  EXPECT_EQ(plan.trials[4].workload, "pp32+tg16");
  EXPECT_EQ(plan.n_skipped(), 0u);
}

TEST(SweepPlan, SettingsThatCoincideRunOnce) {
  // -ub is capped at -b: b 32 with ub 64 is b 32 with ub 32.
  auto plan = plan_of("models: m.gguf\nbatch_size: 32\nubatch_size: [32, 64]\nworkloads:\n  - {pp: 64}\n");
  ASSERT_EQ(plan.trials.size(), 1u);
  EXPECT_EQ(plan.trials[0].config["n_ubatch"], 32);
  // -b past the largest decode of the workload changes nothing: pp 64 at b 128 or 256 runs as b 64; tg
  // decodes one token at a time; a batched workload decodes at most np x pp tokens at once. The first of the
  // coinciding settings runs, as given.
  plan = plan_of(
      "models: m.gguf\nbatch_size: [128, 256]\nubatch_size: [32, 512]\nworkloads:\n  - {pp: 64}\n  - {tg: 16}\n"
      "  - {np: 2, pp: 16, tg: 4}\n");
  ASSERT_EQ(plan.trials.size(), 4u);  // pp64: ub 32 and 64; tg16: one; batched: ub 32
  EXPECT_EQ(plan.trials[0].config["n_batch"], 128);
  EXPECT_EQ(plan.trials[0].config["n_ubatch"], 32);
  EXPECT_EQ(plan.trials[1].config["n_ubatch"], 128);
  EXPECT_EQ(plan.trials[2].workload, "tg16");
  EXPECT_EQ(plan.trials[2].config["n_batch"], 128);
  EXPECT_EQ(plan.trials[2].config["n_ubatch"], 32);
  EXPECT_EQ(plan.trials[3].config["n_batch"], 128);
  EXPECT_EQ(plan.trials[3].config["n_ubatch"], 32);
}

TEST(SweepPlan, ContextZeroIsWhatTheWorkloadNeeds) {
  const auto plan =
      plan_of("models: m.gguf\nworkloads:\n  - {pp: 64, tg: 16, depth: 100}\n  - {np: [2, 4], pp: 32, tg: 8}\n");
  ASSERT_EQ(plan.trials.size(), 3u);
  EXPECT_EQ(plan.trials[0].config["n_ctx"], 180);
  EXPECT_EQ(plan.trials[1].config["n_ctx"], 80);
  EXPECT_EQ(plan.trials[1].config["n_parallel"], 2);
  EXPECT_EQ(plan.trials[2].config["n_ctx"], 160);
  EXPECT_EQ(plan.trials[2].config["n_parallel"], 4);
}

TEST(SweepPlan, SkipsWithPredictionAndReason) {
  // KV per token: 4 layers x 2 heads x 32 x (K + V) x 2 bytes (f16) = 1 KiB; 1 MiB of weights.
  const auto plan = plan_of(
      "models: m.gguf\nctx_size: [32, 512, 4096]\nn_gpu_layers: [0, 8]\nmin_ctx: 256\nmax_mem: 4M\n"
      "workloads:\n  - {pp: 64}\n");
  ASSERT_EQ(plan.trials.size(), 6u);
  std::map<std::pair<int, int>, std::string> reasons;
  for (const auto& t : plan.trials) {
    reasons[{t.config["n_gpu_layers"].get<int>(), t.config["n_ctx"].get<int>()}] = t.skip_reason;
    ASSERT_TRUE(t.memory);
    EXPECT_EQ(t.memory->weights, 1u << 20);
    EXPECT_EQ(t.memory->kv, 1024u * t.config["n_ctx"].get<uint64_t>());
  }
  const std::string small = reasons[{0, 32}], fits = reasons[{0, 512}], big = reasons[{0, 4096}],
                    gpu = reasons[{8, 512}];
  EXPECT_NE(small.find("smaller than the 64 tokens"), std::string::npos) << small;
  EXPECT_EQ(fits, "");
  EXPECT_NE(big.find("exceeds --max-mem 4.0 MiB"), std::string::npos) << big;
  EXPECT_NE(gpu.find("-ngl 8"), std::string::npos) << gpu;
  EXPECT_EQ(plan.n_skipped(), 5u);
}

TEST(SweepPlan, MinCtxSkips) {
  const auto plan = plan_of("models: m.gguf\nmin_ctx: 1000\nworkloads:\n  - {pp: 64}\n");
  ASSERT_EQ(plan.trials.size(), 1u);
  EXPECT_NE(plan.trials[0].skip_reason.find("below --min-ctx 1000"), std::string::npos);
}

TEST(SweepPlan, UnreadableModelIsAnError) {
  auto plan = plan_sweep(spec_of("models: /nonexistent/m.gguf\n"), gguf_model_shapes());
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("/nonexistent/m.gguf"), std::string::npos) << plan.error().message;
}

std::vector<std::string> order_of(const SweepPlan& plan) {
  std::vector<std::string> out;
  for (const auto& t : plan.trials) out.push_back(t.hash);
  return out;
}

TEST(SweepPlan, OrdersArePermutationsOfTheProduct) {
  const std::string base = "models: [a.gguf, b.gguf, c.gguf]\nthreads: 1-6\nworkloads:\n  - {pp: 8}\n";
  const auto grouped = plan_of(base);
  const auto interleaved = plan_of(base + "order: interleaved\n");
  const auto random7 = plan_of(base + "order: random:7\n");
  const auto random7_again = plan_of(base + "order: random:7\n");
  const auto random8 = plan_of(base + "order: random:8\n");
  auto sorted = [](std::vector<std::string> v) {
    std::ranges::sort(v);
    return v;
  };
  for (const auto* p : {&interleaved, &random7, &random8}) EXPECT_EQ(sorted(order_of(*p)), sorted(order_of(grouped)));
  EXPECT_EQ(order_of(random7), order_of(random7_again));
  EXPECT_NE(order_of(random7), order_of(random8));
  EXPECT_NE(order_of(random7), order_of(grouped));
  // Interleaved: within a group, first, last, second, second last, ...
  std::vector<int> threads;
  for (size_t i : interleaved.groups[0].trials) threads.push_back(interleaved.trials[i].config["threads"]);
  EXPECT_EQ(threads, (std::vector<int>{1, 6, 2, 5, 3, 4}));
  // Random keeps the groups together: a model is loaded once.
  for (const auto& g : random7.groups) {
    for (size_t i : g.trials) EXPECT_EQ(random7.trials[i].config["model"], g.key["model"]);
  }
}

TEST(SweepPlan, TableShowsGroupsTrialsAndSkips) {
  const auto spec = spec_of("models: m.gguf\nctx_size: [128, 4096]\nmax_mem: 3M\nworkloads:\n  - {pp: 64}\n");
  auto plan = plan_sweep(spec, test::fake_model_shapes());
  ASSERT_TRUE(plan);
  const std::string table = format_plan(spec, *plan);
  EXPECT_NE(table.find("2 trials in 1 reload groups, 1 skipped"), std::string::npos) << table;
  EXPECT_NE(table.find("group 1/1: m.gguf -ngl 0 -mmp 1"), std::string::npos) << table;
  EXPECT_NE(table.find(plan->trials[0].hash), std::string::npos) << table;
  EXPECT_NE(table.find("skip: predicted"), std::string::npos) << table;
  const auto json = plan_to_json(*plan);
  EXPECT_EQ(json["spec_hash"], spec.hash());
  EXPECT_EQ(json["groups"][0]["trials"][1]["predicted_bytes"]["kv"], 1024 * 4096);
  EXPECT_TRUE(json["groups"][0]["trials"][0]["skip_reason"].is_null());
}

// -ngl on a host with a GPU: each offload's device memory is predicted (what gpu_memory.h says the engine
// allocates), what does not fit the GPU is skipped with the figures, and auto becomes the most layers that
// fit, per trial (a longer context leaves room for fewer).
TEST(SweepPlanGpu, AutoResolvesToTheMostLayersThatFitAndLargerOffloadsAreSkipped) {
  const SweepSpec spec =
      spec_of("models: m.gguf\nn_gpu_layers: [0, 2, 5, auto]\nctx_size: [64, 4096]\nworkloads:\n  - {tg: 8}\n");
  const ModelShape shape = test::fake_model_shape();
  // Room for the output layer and 2 layers with their 4096-cell f16 caches, but not for 3 of them.
  GpuMemoryInputs in{.n_gpu_layers = 2, .n_cells = 4096, .max_tokens = 1};
  const uint64_t budget = predict_gpu_memory(shape.config, shape.offload, in).total() + (100 << 10);
  const std::vector<uint64_t> gpu_memory = {budget + kDeviceReserveBytes};  // the engine keeps the reserve free
  auto plan = plan_sweep(spec, test::fake_model_shapes(), gpu_memory);
  ASSERT_TRUE(plan) << plan.error().message;
  std::map<std::pair<std::string, uint32_t>, const PlannedTrial*> by;  // (config ngl, ctx) -> trial
  for (const PlannedTrial& t : plan->trials) {
    by[{t.config["n_gpu_layers"].dump(), t.config["n_ctx"].get<uint32_t>()}] = &t;
  }
  ASSERT_TRUE(by.count({"2", 4096}));
  EXPECT_FALSE(by.at({"2", 4096})->skipped());
  EXPECT_GT(by.at({"2", 4096})->memory->gpu.kv, 0u);
  ASSERT_TRUE(by.count({"5", 4096}));  // 4 layers + output: too much with 4096 cells
  EXPECT_NE(by.at({"5", 4096})->skip_reason.find("predicted GPU memory"), std::string::npos);
  EXPECT_FALSE(by.at({"5", 64})->skipped());  // 64 cells fit
  EXPECT_EQ(by.at({"0", 4096})->memory->gpu.total(), 0u);
  // auto: 5 (everything) with 64 cells; 2 with 4096. It coincides with the explicit value, so the plan
  // keeps one trial of each (the first); none is left with "auto".
  for (const PlannedTrial& t : plan->trials) EXPECT_NE(t.config["n_gpu_layers"], "auto") << t.config.dump();
  EXPECT_EQ(plan->trials.size(), 6u);
}

TEST(SweepPlanGpu, WithoutAGpuEveryOffloadIsSkippedSayingSo) {
  const auto plan = plan_of("models: m.gguf\nn_gpu_layers: [0, 99, auto]\nworkloads:\n  - {tg: 8}\n");
  ASSERT_EQ(plan.trials.size(), 3u);
  size_t skipped = 0;
  for (const PlannedTrial& t : plan.trials) {
    if (!t.skipped()) continue;
    ++skipped;
    EXPECT_NE(t.skip_reason.find("no CUDA GPU on this host"), std::string::npos) << t.skip_reason;
  }
  EXPECT_EQ(skipped, 2u);
}

}  // namespace
}  // namespace infertune
