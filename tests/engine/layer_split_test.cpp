// -sm / -ts / -mg: which device runs which offloaded layers, dealt as llama.cpp deals them (offloaded layer
// j of n, the output layer counted last, goes to the first device whose running share exceeds j / n), the
// -ts text, -ngl auto over several devices, and the flags' checks. Pure arithmetic: no GPU needed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/gpu/layer_split.h"
#include "engine/settings/settings_table.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kGiB = uint64_t{1} << 30;

struct Expected {
  int device;
  uint32_t first, end;
  bool output;
};

void expect_shares(const Result<std::vector<DeviceLayers>>& shares, const std::vector<Expected>& expected) {
  ASSERT_TRUE(shares.ok()) << shares.error().message;
  ASSERT_EQ(shares->size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ((*shares)[i].device, expected[i].device);
    EXPECT_EQ((*shares)[i].split.first_layer, expected[i].first);
    EXPECT_EQ((*shares)[i].split.end_layer, expected[i].end);
    EXPECT_EQ((*shares)[i].split.output, expected[i].output);
  }
}

TEST(LayerSplit, OneDeviceOrSplitModeNoneTakesEverythingOnTheMainGpu) {
  const std::vector<uint64_t> one = {8 * kGiB};
  expect_shares(split_layers(99, 32, {}, one), {{0, 0, 32, true}});
  expect_shares(split_layers(8, 32, {}, one), {{0, 24, 32, false}});
  const std::vector<uint64_t> two = {8 * kGiB, 8 * kGiB};
  expect_shares(split_layers(99, 32, {.mode = SplitMode::none, .main_gpu = 1}, two), {{1, 0, 32, true}});
  expect_shares(split_layers(0, 32, {}, two), {});
}

TEST(LayerSplit, LayerModeDealsTheLayersAndTheOutputInProportionToTs) {
  const std::vector<uint64_t> two = {8 * kGiB, 8 * kGiB};
  // 33 offloaded (32 layers and the output), shares 3:1 -> cut at 0.75: j / 33 < 0.75 for j <= 24.
  expect_shares(split_layers(99, 32, {.proportions = {3, 1}}, two), {{0, 0, 25, false}, {1, 25, 32, true}});
  // The last 8 layers, no output: j / 8 < 0.75 for j <= 5.
  expect_shares(split_layers(8, 32, {.proportions = {3, 1}}, two), {{0, 24, 30, false}, {1, 30, 32, false}});
  // A device with no share gets nothing, and the output goes with the last device that has one.
  const std::vector<uint64_t> three = {8 * kGiB, 8 * kGiB, 8 * kGiB};
  expect_shares(split_layers(-1, 32, {.proportions = {1, 0, 1}}, three), {{0, 0, 17, false}, {2, 17, 32, true}});
  expect_shares(split_layers(-1, 32, {.proportions = {0, 1}}, two), {{1, 0, 32, true}});
}

TEST(LayerSplit, WithoutTsTheSharesFollowEachDevicesFreeMemory) {
  const std::vector<uint64_t> free = {24 * kGiB, 8 * kGiB};
  expect_shares(split_layers(33, 32, {}, free), {{0, 0, 25, false}, {1, 25, 32, true}});
  expect_shares(split_layers(33, 32, {.proportions = {0, 0}}, free), {{0, 0, 25, false}, {1, 25, 32, true}});
}

TEST(LayerSplit, TsAndMgThatDoNotMatchTheDevicesAreRefused) {
  const std::vector<uint64_t> two = {8 * kGiB, 8 * kGiB};
  auto too_many = split_layers(99, 32, {.proportions = {1, 1, 1}}, two);
  ASSERT_FALSE(too_many.ok());
  EXPECT_THAT(too_many.error().message, HasSubstr("-ts 1/1/1: 3 entries for 2 CUDA devices"));
  auto negative = split_layers(99, 32, {.proportions = {1, -1}}, two);
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.error().message, HasSubstr("-ts 1/-1"));
  auto main = split_layers(99, 32, {.mode = SplitMode::none, .main_gpu = 2}, two);
  ASSERT_FALSE(main.ok());
  EXPECT_THAT(main.error().message, HasSubstr("-mg 2: there are 2 CUDA devices"));
}

TEST(TensorSplitText, ParsesBothSeparatorsAndRefusesWhatIsNotAShare) {
  auto slash = parse_tensor_split("3/1");
  ASSERT_TRUE(slash.ok());
  EXPECT_EQ(*slash, (std::vector<double>{3, 1}));
  auto comma = parse_tensor_split("0.5,0.25,0.25");
  ASSERT_TRUE(comma.ok());
  EXPECT_EQ(*comma, (std::vector<double>{0.5, 0.25, 0.25}));
  EXPECT_EQ(tensor_split_text(*comma), "0.5/0.25/0.25");
  EXPECT_EQ(tensor_split_text(*slash, ','), "3,1");
  for (const char* bad : {"", "3/", "/1", "a/b", "-1/1", "inf/1", "nan", "3 /1", "1/2,3"}) {
    SCOPED_TRACE(bad);
    auto parsed = parse_tensor_split(bad);
    ASSERT_FALSE(parsed.ok());
    EXPECT_THAT(parsed.error().message, HasSubstr("a share per device"));
  }
}

TEST(TensorSplitText, TheFlagsSpellTheirValuesCanonically) {
  const Setting* ts = find_setting_by_flag("-ts");
  ASSERT_NE(ts, nullptr);
  EXPECT_EQ(*ts->parse("3,1"), "3/1");
  EXPECT_EQ(*ts->parse("0/0"), "0");
  const Setting* sm = find_setting_by_flag("-sm");
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(*sm->parse("none"), "none");
  auto row = sm->parse("row");
  ASSERT_FALSE(row.ok());
  EXPECT_THAT(row.error().message, HasSubstr("-sm: 'row'"));
  EXPECT_THAT(row.error().message, HasSubstr("not supported: use layer or none"));

  EngineSettings settings;
  ts->apply("3/1", settings);
  sm->apply("none", settings);
  EXPECT_EQ(settings.tensor_split, (std::vector<double>{3, 1}));
  EXPECT_EQ(settings.split_mode, SplitMode::none);
  EXPECT_EQ(ts->read(settings), "3/1");
  ts->apply("0", settings);
  EXPECT_TRUE(settings.tensor_split.empty());
}

// A model of 4 layers of 1 GiB each and a 1 GiB output layer, no K/V and no activations to speak of.
struct FitCase {
  ModelConfig config;
  OffloadWeightBytes weights{.layers = {kGiB, kGiB, kGiB, kGiB}, .output = kGiB};
  GpuMemoryInputs in{.kv_offload = false, .n_cells = 16, .max_tokens = 1};
  FitCase() {
    config.n_layers = 4;
    config.n_embd = 64;
    config.n_ff = 128;
    config.n_head = 4;
    config.n_head_kv = 4;
    config.head_dim = 16;
    config.head_dim_v = 16;
    config.n_vocab = 100;
  }
};

TEST(LayerSplit, NglAutoFitsEachDevicesShareIntoItsBudget) {
  FitCase f;
  const uint64_t room = kDeviceReserveBytes + 3 * kGiB + kGiB / 2;  // three 1 GiB tensors and the activations
  // One device: 3 of the 5 offloadable pieces fit.
  EXPECT_EQ(fit_split_layers(f.config, f.weights, f.in, {}, std::vector<uint64_t>{room}), 3);
  // Two such devices, shared by free memory: everything (3 + 2).
  EXPECT_EQ(fit_split_layers(f.config, f.weights, f.in, {}, std::vector<uint64_t>{room, room}), 5);
  // -sm none keeps it on one of them.
  EXPECT_EQ(fit_split_layers(f.config, f.weights, f.in, {.mode = SplitMode::none}, std::vector<uint64_t>{room, room}),
            3);
  // -ts 4/1 cuts at 0.8: of 5 or 4 offloaded pieces device 0 gets 4, of 3 all of them; 3 is what fits.
  EXPECT_EQ(fit_split_layers(f.config, f.weights, f.in, {.proportions = {4, 1}}, std::vector<uint64_t>{room, room}), 3);
}

}  // namespace
}  // namespace infertune
