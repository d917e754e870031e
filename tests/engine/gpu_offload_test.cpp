// -ngl: the split of layers between CPU and GPU as llama.cpp counts it; without a GPU, -ngl is a warning and
// the CPU's answers; with one, a memory budget too small for the weights is refused with a message naming
// what did not fit, and the context reports what it put on the device. (The logits with layers on the GPU
// are checked against llama.cpp's in forward_fixture_test.cpp.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/context/context.h"
#include "engine/gpu/gpu_offload.h"
#include "engine/model/model.h"
#include "engine/settings/make_context.h"
#include "kernels/cuda/cuda_devices.h"
#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

std::string fixture(const char* name) { return test::fixture_path(std::string("models/") + name).string(); }
bool have_gpu() { return !cuda_devices().empty(); }

TEST(OffloadSplit, CountsTheLastLayersAndTheOutputAsLlamaCpp) {
  EXPECT_EQ(offload_split(0, 32).first_layer, 32u);
  EXPECT_FALSE(offload_split(0, 32).output);
  EXPECT_EQ(offload_split(8, 32).first_layer, 24u);
  EXPECT_FALSE(offload_split(32, 32).output);
  EXPECT_EQ(offload_split(32, 32).first_layer, 0u);
  EXPECT_TRUE(offload_split(33, 32).output);
  EXPECT_EQ(offload_split(99, 32).first_layer, 0u);
  EXPECT_TRUE(offload_split(-1, 32).output);
  EXPECT_EQ(offload_split(-1, 32).first_layer, 0u);
}

TEST(GpuOffloadWithoutGpu, NglWarnsOnceAndRunsTheCpu) {
  if (have_gpu()) GTEST_SKIP() << "a CUDA device is visible: the offload itself is tested";
  auto model = Model::load(fixture("fixture-llama-Q8_0.gguf"));
  ASSERT_TRUE(model.ok()) << model.error().message;
  EngineSettings settings;
  settings.context.n_ctx = 64;
  settings.n_gpu_layers = 99;
  auto placed = make_context(*model, settings);
  ASSERT_TRUE(placed.ok()) << placed.error().message;
  ASSERT_EQ(placed->warnings.size(), 1u);
  EXPECT_THAT(placed->warnings[0], HasSubstr("-ngl 99"));
  EXPECT_THAT(placed->warnings[0], HasSubstr("running every layer on the CPU"));
  EXPECT_EQ(placed->context->gpu(), nullptr);

  settings.n_gpu_layers = 0;
  auto cpu = make_context(*model, settings);
  ASSERT_TRUE(cpu.ok());
  const std::vector<int32_t> tokens = {1, 5, 9, 200};
  auto a = placed->context->decode(tokens, Logits::All);
  ASSERT_TRUE(a.ok());
  const std::vector<float> first(a->begin(), a->end());
  auto b = cpu->context->decode(tokens, Logits::All);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(first, std::vector<float>(b->begin(), b->end()));
}

TEST(GpuOffloadWithoutGpu, CreateSaysWhyThereIsNoDevice) {
  if (have_gpu()) GTEST_SKIP() << "a CUDA device is visible";
  auto model = Model::load(fixture("fixture-llama-Q8_0.gguf"));
  ASSERT_TRUE(model.ok());
  auto gpu = GpuOffload::create(*model, {.n_gpu_layers = 4, .n_cells = 64});
  ASSERT_FALSE(gpu.ok());
  EXPECT_THAT(gpu.error().message, HasSubstr("-ngl 4: no CUDA device"));
}

TEST(GpuOffloadOnGpu, ABudgetTooSmallForTheWeightsIsRefusedNamingTheTensor) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible";
  auto model = Model::load(fixture("fixture-llama-Q8_0.gguf"));
  ASSERT_TRUE(model.ok());
  auto gpu = GpuOffload::create(*model, {.n_gpu_layers = 99, .n_cells = 64, .memory_budget = 200 * 1024});
  ASSERT_FALSE(gpu.ok());
  EXPECT_THAT(gpu.error().message, HasSubstr("out of GPU memory for tensor 'blk."));
  EXPECT_THAT(gpu.error().message, HasSubstr("MiB budget are free"));
}

TEST(GpuOffloadOnGpu, AKvCacheLargerThanTheDeviceIsRefusedNamingTheLayer) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible";
  auto model = Model::load(fixture("fixture-llama-Q8_0.gguf"));
  ASSERT_TRUE(model.ok());
  // 2^31 cells of f32 K/V: 2 heads x 32 values x 4 bytes x 2^31 = 512 GiB per layer, more than any GPU has.
  auto gpu = GpuOffload::create(
      *model, {.n_gpu_layers = 99, .n_cells = 1u << 31, .type_k = GgmlType::F32, .type_v = GgmlType::F32});
  ASSERT_FALSE(gpu.ok());
  EXPECT_THAT(gpu.error().message, HasSubstr("the K cache of layer 0"));
  EXPECT_THAT(gpu.error().message, HasSubstr("MiB are free"));
}

TEST(GpuOffloadOnGpu, ReportsWhatItHoldsAndRefusesShiftsOfDeviceKeys) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible";
  auto model = Model::load(fixture("fixture-llama-Q4_K_M.gguf"));
  ASSERT_TRUE(model.ok());
  auto ctx = Context::create(*model, {.n_ctx = 128, .n_gpu_layers = 2});
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  ASSERT_NE(ctx->gpu(), nullptr);
  EXPECT_EQ(ctx->gpu()->first_layer(), 2u);
  EXPECT_FALSE(ctx->gpu()->runs_output());
  EXPECT_GT(ctx->gpu()->memory().weights, 0u);
  EXPECT_GT(ctx->gpu()->memory().kv, 0u);
  ASSERT_TRUE(ctx->decode({1, 2, 3}).ok());
  const Status shift = ctx->kv_cache().seq_add(0, 0, -1, 5);
  ASSERT_FALSE(shift.ok());
  EXPECT_THAT(shift.error().message, HasSubstr("--no-kv-offload"));
}

// -sm layer over several GPUs, run on one: two shares of the layers on device 0 (create_on) move the
// residual stream from one share to the next through host memory, and answer as one share does.
TEST(GpuOffloadOnGpu, TwoSharesAnswerAsOne) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible";
  auto model = Model::load(fixture("fixture-llama-Q8_0.gguf"));
  ASSERT_TRUE(model.ok());
  const uint32_t n = model->config().n_layers;
  ASSERT_GE(n, 2u);
  const std::vector<int32_t> tokens = {1, 5, 9, 200, 17};
  auto logits_with = [&](std::vector<DeviceLayers> shares) {
    ContextParams params;
    params.n_ctx = 64;
    params.n_gpu_layers = 99;
    params.gpu_shares = std::move(shares);
    auto ctx = Context::create(*model, params);
    EXPECT_TRUE(ctx.ok()) << ctx.error().message;
    std::vector<float> out;
    if (!ctx.ok()) return out;
    EXPECT_EQ(ctx->gpu()->first_layer(), 0u);
    EXPECT_TRUE(ctx->gpu()->runs_output());
    EXPECT_EQ(ctx->gpu()->n_segments(), params.gpu_shares.size());
    auto logits = ctx->decode(tokens, Logits::All);
    EXPECT_TRUE(logits.ok()) << logits.error().message;
    if (logits.ok()) out.assign(logits->begin(), logits->end());
    return out;
  };
  const std::vector<float> one = logits_with({{0, {0, n, true}}});
  const std::vector<float> two = logits_with({{0, {0, n / 2, false}}, {0, {n / 2, n, true}}});
  ASSERT_FALSE(one.empty());
  EXPECT_EQ(one, two);
}

TEST(GpuOffloadOnGpu, SharesThatAreNotConsecutiveAreRefused) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible";
  auto model = Model::load(fixture("fixture-llama-Q8_0.gguf"));
  ASSERT_TRUE(model.ok());
  const uint32_t n = model->config().n_layers;
  auto gap =
      GpuOffload::create_on(*model, {.n_gpu_layers = 99, .n_cells = 64}, {{0, {0, 1, false}}, {0, {2, n, true}}});
  ASSERT_FALSE(gap.ok());
  EXPECT_THAT(gap.error().message, HasSubstr("consecutive runs"));
}

}  // namespace
}  // namespace infertune
