// Planning offloads over several GPUs: each trial's layers are dealt over the devices as the engine deals them
// (-sm, -ts, -mg; engine/gpu/layer_split.h), each device's share is predicted with the sizes the engine
// allocates by (predict_split_memory) and checked against that device alone, -ngl auto fits every share, the
// split settings make reload groups (one upload per group), and options the GPUs cannot take are skips that
// say why.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_model_shape.h"
#include "sweeps/plan/plan_table.h"
#include "sweeps/plan/trial_plan.h"
#include "sweeps/spec/spec_yaml.h"

namespace infertune {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

SweepSpec spec_of(const std::string& yaml) {
  auto text = parse_spec_yaml(yaml, "spec.yaml");
  EXPECT_TRUE(text) << text.error().message;
  auto spec = resolve_spec(*text);
  EXPECT_TRUE(spec) << spec.error().message;
  return *spec;
}

SweepPlan plan_on(const SweepSpec& spec, const std::vector<uint64_t>& gpu_memory) {
  auto plan = plan_sweep(spec, test::fake_model_shapes(), gpu_memory);
  EXPECT_TRUE(plan) << plan.error().message;
  return *plan;
}

SweepPlan plan_on(const std::string& yaml, const std::vector<uint64_t>& gpu_memory) {
  return plan_on(spec_of(yaml), gpu_memory);
}

// What the engine allocates on each device for the fake model's offload of `ngl` with `options`: tg workloads
// (one token a decode), an f16 cache of `n_ctx` cells.
std::vector<GpuMemoryUse> engine_shares(int ngl, const LayerSplitOptions& options, const std::vector<uint64_t>& memory,
                                        uint32_t n_ctx, std::vector<DeviceLayers>* layers = nullptr) {
  const ModelShape shape = test::fake_model_shape();
  auto shares = split_layers(ngl, shape.config.n_layers, options, memory);
  EXPECT_TRUE(shares) << shares.error().message;
  std::vector<GpuMemoryUse> uses;
  const GpuMemoryInputs in{.n_gpu_layers = ngl, .n_cells = n_ctx, .max_tokens = 1};
  for (const DeviceLayers& share : *shares) {
    uses.push_back(predict_split_memory(shape.config, shape.offload, in, share.split));
  }
  if (layers) *layers = *shares;
  return uses;
}

TEST(SweepPlanGpus, EachGpuHoldsItsShareAsTheEngineDealsIt) {
  const std::vector<uint64_t> memory = {kDeviceReserveBytes + 64 * kMiB, kDeviceReserveBytes + 64 * kMiB};
  const SweepSpec spec = spec_of(
      "models: m.gguf\nn_gpu_layers: [99]\ntensor_split: [3/1, 1/1]\nctx_size: [4096]\nworkloads:\n  - {tg: 8}\n");
  const SweepPlan plan = plan_on(spec, memory);
  ASSERT_EQ(plan.trials.size(), 2u);
  ASSERT_EQ(plan.groups.size(), 2u);  // the split is part of the offload: one upload per group
  for (const PlannedTrial& t : plan.trials) {
    ASSERT_FALSE(t.skipped()) << t.skip_reason;
    const std::string ts = t.config["tensor_split"];
    std::vector<DeviceLayers> expected_layers;
    const std::vector<double> proportions = ts == "3/1" ? std::vector<double>{3, 1} : std::vector<double>{1, 1};
    const auto expected = engine_shares(99, {.proportions = proportions}, memory, 4096, &expected_layers);
    ASSERT_EQ(t.memory->gpu_devices.size(), expected.size()) << ts;
    uint64_t sum = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      const DeviceMemoryUse& d = t.memory->gpu_devices[i];
      EXPECT_EQ(d.share.device, expected_layers[i].device) << ts;
      EXPECT_EQ(d.share.split, expected_layers[i].split) << ts;
      EXPECT_EQ(d.use.total(), expected[i].total()) << ts << " device " << d.share.device;
      sum += d.use.total();
    }
    EXPECT_EQ(t.memory->gpu.total(), sum);
    // The output layer rides with the last device, as in the engine.
    EXPECT_TRUE(t.memory->gpu_devices.back().share.split.output);
  }
  // 3/1 gives the first GPU more layers than 1/1 does.
  const auto layers_on_0 = [](const PlannedTrial& t) {
    const OffloadSplit& s = t.memory->gpu_devices[0].share.split;
    return s.end_layer - s.first_layer;
  };
  const bool first_is_3_1 = plan.trials[0].config["tensor_split"] == "3/1";
  EXPECT_GT(layers_on_0(plan.trials[first_is_3_1 ? 0 : 1]), layers_on_0(plan.trials[first_is_3_1 ? 1 : 0]));
  // The groups say which split they upload.
  const std::string table = format_plan(spec, plan);
  EXPECT_NE(table.find("-ngl 99 -ts 3/1"), std::string::npos) << table;
  EXPECT_NE(table.find("-ngl 99 -ts 1/1"), std::string::npos) << table;
  const auto json = plan_to_json(plan);
  EXPECT_EQ(json["groups"][0]["trials"][0]["predicted_gpu_bytes"]["devices"].size(), 2u);
}

// A share is checked against its own device: the total would fit either GPU, but GPU 1 cannot hold its part.
TEST(SweepPlanGpus, AShareOverItsGpuIsSkippedNamingTheGpu) {
  const std::vector<uint64_t> roomy = {kDeviceReserveBytes + 64 * kMiB, kDeviceReserveBytes + 64 * kMiB};
  const auto shares = engine_shares(99, {.proportions = {1, 1}}, roomy, 4096);
  ASSERT_EQ(shares.size(), 2u);
  const std::vector<uint64_t> memory = {kDeviceReserveBytes + 64 * kMiB, kDeviceReserveBytes + shares[1].total() - 1};
  const SweepPlan plan = plan_on(
      "models: m.gguf\nn_gpu_layers: [99]\ntensor_split: [1/1]\nctx_size: [4096]\nworkloads:\n  - {tg: 8}\n", memory);
  ASSERT_EQ(plan.trials.size(), 1u);
  EXPECT_NE(plan.trials[0].skip_reason.find("predicted GPU memory"), std::string::npos) << plan.trials[0].skip_reason;
  EXPECT_NE(plan.trials[0].skip_reason.find("on GPU 1 (layers"), std::string::npos) << plan.trials[0].skip_reason;

  // -sm none puts everything on -mg, which has the room.
  const SweepPlan on_main = plan_on(
      "models: m.gguf\nn_gpu_layers: [99]\nsplit_mode: [none]\nmain_gpu: [0]\nctx_size: [4096]\nworkloads:\n"
      "  - {tg: 8}\n",
      memory);
  ASSERT_EQ(on_main.trials.size(), 1u);
  EXPECT_FALSE(on_main.trials[0].skipped()) << on_main.trials[0].skip_reason;
  ASSERT_EQ(on_main.trials[0].memory->gpu_devices.size(), 1u);
  EXPECT_EQ(on_main.trials[0].memory->gpu_devices[0].share.device, 0);
}

// auto: the most layers whose every share fits its GPU; one layer more does not fit.
TEST(SweepPlanGpus, AutoFitsEveryShareIntoItsGpu) {
  const std::vector<uint64_t> roomy = {kDeviceReserveBytes + 64 * kMiB, kDeviceReserveBytes + 64 * kMiB};
  // Room on each GPU for about two of the fake model's layers with 4096-cell caches (about 1.2 MiB each).
  const auto two = engine_shares(4, {.proportions = {1, 1}}, roomy, 4096);
  const std::vector<uint64_t> memory = {kDeviceReserveBytes + two[0].total() + 64 * 1024,
                                        kDeviceReserveBytes + two[0].total() + 64 * 1024};
  const std::string dims = "models: m.gguf\ntensor_split: [1/1]\nctx_size: [4096]\nworkloads:\n  - {tg: 8}\n";
  const SweepPlan plan = plan_on(dims + "n_gpu_layers: [auto]\n", memory);
  ASSERT_EQ(plan.trials.size(), 1u);
  const PlannedTrial& t = plan.trials[0];
  ASSERT_TRUE(t.config["n_gpu_layers"].is_number()) << t.config.dump();
  const int ngl = t.config["n_gpu_layers"];
  EXPECT_GT(ngl, 0);
  EXPECT_LT(ngl, 5);  // not the whole model
  EXPECT_FALSE(t.skipped()) << t.skip_reason;
  EXPECT_EQ(t.memory->gpu_devices.size(), 2u);

  const SweepPlan more = plan_on(dims + "n_gpu_layers: [" + std::to_string(ngl + 1) + "]\n", memory);
  ASSERT_EQ(more.trials.size(), 1u);
  EXPECT_NE(more.trials[0].skip_reason.find("predicted GPU memory"), std::string::npos) << more.trials[0].skip_reason;
}

// Split options the GPUs cannot take are refused per trial, with the engine's words, for auto too.
TEST(SweepPlanGpus, SplitOptionsTheGpusCannotTakeAreSkippedSayingWhy) {
  const std::vector<uint64_t> memory = {kDeviceReserveBytes + 64 * kMiB, kDeviceReserveBytes + 64 * kMiB};
  const SweepPlan plan =
      plan_on("models: m.gguf\nn_gpu_layers: [99, auto]\ntensor_split: [1/1/1]\nworkloads:\n  - {tg: 8}\n", memory);
  ASSERT_EQ(plan.trials.size(), 2u);
  for (const PlannedTrial& t : plan.trials) {
    EXPECT_NE(t.skip_reason.find("-ngl "), std::string::npos) << t.skip_reason;
    EXPECT_NE(t.skip_reason.find("3 entries"), std::string::npos) << t.skip_reason;
  }
  const SweepPlan main_gpu = plan_on(
      "models: m.gguf\nn_gpu_layers: [99]\nsplit_mode: [none]\nmain_gpu: [2]\nworkloads:\n  - {tg: 8}\n", memory);
  ASSERT_EQ(main_gpu.trials.size(), 1u);
  EXPECT_NE(main_gpu.trials[0].skip_reason.find("-mg 2"), std::string::npos) << main_gpu.trials[0].skip_reason;
  // -ngl 0 needs no GPU: it runs whatever the split options say.
  const SweepPlan cpu =
      plan_on("models: m.gguf\nn_gpu_layers: [0]\ntensor_split: [1/1/1]\nworkloads:\n  - {tg: 8}\n", memory);
  ASSERT_EQ(cpu.trials.size(), 1u);
  EXPECT_FALSE(cpu.trials[0].skipped()) << cpu.trials[0].skip_reason;
}

// How GPUs share an offload changes nothing when nothing is offloaded, nor -ts when -sm none puts it all on -mg:
// such trials run once, and a group left with no trial of its own is not planned.
TEST(SweepPlanGpus, SplitSettingsThatChangeNothingRunOnce) {
  const std::vector<uint64_t> memory = {kDeviceReserveBytes + 64 * kMiB, kDeviceReserveBytes + 64 * kMiB};
  const SweepPlan plan =
      plan_on("models: m.gguf\nn_gpu_layers: [0, 99]\ntensor_split: [3/1, 1/1]\nworkloads:\n  - {tg: 8}\n", memory);
  size_t on_cpu = 0, offloaded = 0;
  for (const PlannedTrial& t : plan.trials) (t.config["n_gpu_layers"] == 0 ? on_cpu : offloaded) += 1;
  EXPECT_EQ(on_cpu, 1u);
  EXPECT_EQ(offloaded, 2u);
  EXPECT_EQ(plan.groups.size(), 3u);
  for (const TrialGroup& g : plan.groups) EXPECT_EQ(g.trials.size(), 1u) << g.key.dump();

  const SweepPlan none = plan_on(
      "models: m.gguf\nn_gpu_layers: [99]\nsplit_mode: [none]\ntensor_split: [3/1, 1/1]\nworkloads:\n  - {tg: 8}\n",
      memory);
  EXPECT_EQ(none.trials.size(), 1u);
  EXPECT_EQ(none.groups.size(), 1u);
}

}  // namespace
}  // namespace infertune
