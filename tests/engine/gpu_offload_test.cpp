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
#include "forward_test_models.h"
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

// Before any device is touched: a mixture of experts has no GPU path, with or without a GPU.
TEST(GpuOffload, AMixtureOfExpertsIsRefusedSayingWhy) {
  auto model = test::load_tiny(ModelArch::Qwen3Moe);
  ASSERT_TRUE(model.ok()) << model.error().message;
  const uint32_t n = (*model)->config().n_layers;
  auto gpu = GpuOffload::create_on(**model, {.n_gpu_layers = 99, .n_cells = 64}, {{0, {0, n, true}}});
  ASSERT_FALSE(gpu.ok());
  EXPECT_THAT(gpu.error().message, HasSubstr("-ngl 99: the GPU path does not run mixture-of-experts layers yet"));
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

// The logits of `tokens` with half the layers (-ngl 2) and all of them (-ngl 99) on the GPU are the CPU's, in a
// context of n_ctx cells.
void expect_offload_gives_the_cpus_logits(const Model& model, const std::vector<int32_t>& tokens, uint32_t n_ctx) {
  auto cpu = test::logits_all(model, tokens, {.n_ctx = n_ctx});
  ASSERT_TRUE(cpu.ok()) << cpu.error().message;
  for (int ngl : {2, 99}) {
    SCOPED_TRACE(fmt::format("-c {} -ngl {}", n_ctx, ngl));
    auto gpu = test::logits_all(model, tokens, {.n_ctx = n_ctx, .n_gpu_layers = ngl});
    ASSERT_TRUE(gpu.ok()) << gpu.error().message;
    EXPECT_LE(test::logits_diff(*gpu, *cpu).rms_over_std, 1e-3);
  }
}

// qwen3's per-head query and key norms run on the GPU (the fixtures are llama and qwen2, which have none): half the
// layers and all of them give the CPU's logits. Leaving the norms out would move the logits by about their spread.
TEST(GpuOffloadOnGpu, Qwen3HeadNormsGiveTheCpusLogits) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible";
  auto model = test::load_tiny(ModelArch::Qwen3);
  ASSERT_TRUE(model.ok()) << model.error().message;
  expect_offload_gives_the_cpus_logits(**model, {1, 5, 9, 200, 17, 300, 42, 8}, 64);
}

// phi3 on the GPU: the fused q/k/v and gate/up upload as their parts, the rope tables carry LongRoPE's factors of the
// context's length (short at -c 256, long at -c 512) and rotate 24 of each head's 32 dimensions; half the layers and
// all of them give the CPU's logits at both lengths.
TEST(GpuOffloadOnGpu, Phi3GivesTheCpusLogits) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible";
  auto model = test::load_tiny(ModelArch::Phi3);
  ASSERT_TRUE(model.ok()) << model.error().message;
  for (uint32_t n_ctx : {256u, 512u})
    expect_offload_gives_the_cpus_logits(**model, {1, 5, 9, 200, 17, 300, 42, 8}, n_ctx);
}

// gemma2 on the GPU: the attention kernel's soft cap (the tiny preset's 2, low enough to matter), GELU gating, the
// post norms, every other layer sliding over 32 positions (crossed by the prompt) and the capped logits.
TEST(GpuOffloadOnGpu, Gemma2GivesTheCpusLogits) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible";
  auto model = test::load_tiny(ModelArch::Gemma2);
  ASSERT_TRUE(model.ok()) << model.error().message;
  std::vector<int32_t> tokens;
  for (int32_t i = 0; i < 40; ++i) tokens.push_back(3 + (i * 37) % 500);
  expect_offload_gives_the_cpus_logits(**model, tokens, 128);
}

// gemma3 on the GPU: head norms, the norms after each sub-layer, GELU gating, sliding-window layers with their own
// rope base (a 32-position window, crossed by the prompt and by the tokens decoded one at a time after it) and the
// soft-capped logits of the output layer (-ngl 99) give the CPU's logits; so does --no-kv-offload, where the
// CPU attends.
TEST(GpuOffloadOnGpu, Gemma3GivesTheCpusLogits) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible";
  auto shape = resolve_synth_model(std::string("gemma3"), std::string("tiny"), {});
  ASSERT_TRUE(shape.ok()) << shape.error().message;
  ASSERT_GT(shape->config.sliding_window, 0u);
  shape->config.final_logit_softcap = 30.0f;
  auto bytes = synthesize_in_memory({shape->config, "tiny", *file_type_from_name("f32"), {}, 3, 1});
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  auto model = Model::from_bytes(std::move(*bytes));
  ASSERT_TRUE(model.ok()) << model.error().message;
  std::vector<int32_t> prompt;
  for (int32_t i = 0; i < 40; ++i) prompt.push_back(3 + (i * 37) % 500);
  const std::vector<int32_t> next = {7, 99, 250, 3, 480, 61, 12, 333};
  // The prompt's logits, then those of each next token decoded alone.
  auto logits_with = [&](int ngl, bool kv_offload) {
    std::vector<float> out;
    auto ctx = Context::create(*model, {.n_ctx = 128, .n_gpu_layers = ngl, .kv_offload = kv_offload});
    EXPECT_TRUE(ctx.ok()) << ctx.error().message;
    if (!ctx.ok()) return out;
    auto first = ctx->decode(prompt, Logits::All);
    EXPECT_TRUE(first.ok()) << first.error().message;
    if (!first.ok()) return out;
    out.assign(first->begin(), first->end());
    for (int32_t token : next) {
      auto step = ctx->decode(std::vector<int32_t>{token}, Logits::Last);
      EXPECT_TRUE(step.ok()) << step.error().message;
      if (!step.ok()) return out;
      out.insert(out.end(), step->begin(), step->end());
    }
    return out;
  };
  const std::vector<float> cpu = logits_with(0, true);
  ASSERT_FALSE(cpu.empty());
  for (auto [ngl, kv_offload] : {std::pair{2, true}, std::pair{99, true}, std::pair{99, false}}) {
    SCOPED_TRACE(fmt::format("-ngl {}{}", ngl, kv_offload ? "" : " --no-kv-offload"));
    const std::vector<float> gpu = logits_with(ngl, kv_offload);
    ASSERT_EQ(gpu.size(), cpu.size());
    EXPECT_LE(test::logits_diff(gpu, cpu).rms_over_std, 1e-3);
  }
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
