// GpuWeightCache: contexts made one after another with the same model, -ngl and device share one upload of
// the offloaded layers; anything else uploads again, after the held weights are released. The keeping is
// tested with a stand-in upload (no GPU needed); on a GPU, contexts sharing the weights give the answers of
// contexts that upload their own.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/context/context.h"
#include "engine/gpu/gpu_weight_cache.h"
#include "engine/model/model.h"
#include "kernels/cuda/cuda_devices.h"
#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

std::string fixture(const char* name) { return test::fixture_path(fmt::format("models/{}", name)).string(); }

// One device's share: the whole split on `device`.
std::vector<DeviceLayers> on(OffloadSplit split, int device = 0) { return {{device, split}}; }

Model load_fixture() {
  auto model = Model::load(fixture("fixture-llama-Q8_0.gguf"));
  EXPECT_TRUE(model.ok()) << model.error().message;
  return std::move(*model);
}

// Records every upload; the weights it makes hold nothing on a device.
struct StandInUpload {
  std::vector<OffloadSplit> splits;
  std::vector<int> devices;
  std::weak_ptr<const GpuWeights> last;  // the previous upload's weights
  bool previous_released_first = true;   // each upload found the previous weights already gone
  bool failing = false;

  GpuWeightCache::Upload function() {
    return [this](const Model&, OffloadSplit split, int device, uint64_t) -> Result<std::shared_ptr<const GpuWeights>> {
      if (!last.expired()) previous_released_first = false;
      if (failing) return infertune::fail("out of GPU memory for tensor 'blk.0.attn_q.weight'");
      splits.push_back(split);
      devices.push_back(device);
      auto weights = std::make_shared<const GpuWeights>(split, device);
      last = weights;
      return weights;
    };
  }
};

TEST(GpuWeightCache, TheSameModelSplitAndDeviceShareOneUpload) {
  const Model model = load_fixture();
  StandInUpload upload;
  GpuWeightCache cache(upload.function());
  const OffloadSplit all = offload_split(99, model.config().n_layers);
  auto first = cache.get(model, on(all, 0), 0);
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto second = cache.get(model, on(all, 0), 0);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*first)[0].get(), (*second)[0].get());
  EXPECT_EQ(cache.uploads(), 1u);
  EXPECT_EQ(upload.splits.size(), 1u);
}

TEST(GpuWeightCache, AnotherSplitOrDeviceUploadsAgainAfterReleasingTheHeldWeights) {
  const Model model = load_fixture();
  StandInUpload upload;
  GpuWeightCache cache(upload.function());
  const uint32_t n_layers = model.config().n_layers;
  ASSERT_TRUE(cache.get(model, on(offload_split(99, n_layers), 0), 0).ok());
  // Same layers, but not the output layer: a different split.
  ASSERT_TRUE(cache.get(model, on(offload_split(static_cast<int>(n_layers), n_layers), 0), 0).ok());
  ASSERT_TRUE(cache.get(model, on(offload_split(1, n_layers), 0), 0).ok());
  ASSERT_TRUE(cache.get(model, on(offload_split(1, n_layers), 1), 0).ok());
  EXPECT_EQ(cache.uploads(), 4u);
  EXPECT_TRUE(upload.previous_released_first) << "an upload ran while the previous weights were still held";
  ASSERT_EQ(upload.splits.size(), 4u);
  EXPECT_TRUE(upload.splits[0].output);
  EXPECT_FALSE(upload.splits[1].output);
  EXPECT_EQ(upload.splits[2].first_layer, n_layers - 1);
  EXPECT_EQ(upload.devices[3], 1);
}

TEST(GpuWeightCache, SharesOnSeveralDevicesAreKeptEachOnItsOwn) {
  const Model model = load_fixture();
  StandInUpload upload;
  GpuWeightCache cache(upload.function());
  const uint32_t n = model.config().n_layers;
  ASSERT_GE(n, 2u);
  const DeviceLayers head{0, {0, 1, false}};
  const std::vector<DeviceLayers> first = {head, {1, {1, n, true}}};
  ASSERT_TRUE(cache.get(model, first, 0).ok());
  EXPECT_EQ(cache.uploads(), 2u);
  upload.previous_released_first = true;  // the head was alive while device 1's share was uploaded: one request
  // The same head on device 0; the rest now on device 2.
  const std::vector<DeviceLayers> second = {head, {2, {1, n, true}}};
  auto kept = cache.get(model, second, 0);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(cache.uploads(), 3u) << "only the share that changed is uploaded";
  EXPECT_TRUE(upload.previous_released_first) << "device 1's share went before device 2's was uploaded";
  ASSERT_EQ(kept->size(), 2u);
  EXPECT_EQ((*kept)[0]->device(), 0);
  EXPECT_EQ((*kept)[1]->device(), 2);
  ASSERT_EQ(upload.devices.size(), 3u);
  EXPECT_EQ(upload.devices[2], 2);
}

TEST(GpuWeightCache, AnotherLoadOfTheSameFileIsAnotherModel) {
  StandInUpload upload;
  GpuWeightCache cache(upload.function());
  const Model first = load_fixture();
  const Model second = load_fixture();
  EXPECT_NE(first.load_id(), second.load_id());
  const OffloadSplit all = offload_split(99, first.config().n_layers);
  ASSERT_TRUE(cache.get(first, on(all, 0), 0).ok());
  ASSERT_TRUE(cache.get(second, on(all, 0), 0).ok());
  EXPECT_EQ(cache.uploads(), 2u);
}

TEST(GpuWeightCache, WeightsInUseOutliveTheirReplacement) {
  const Model model = load_fixture();
  StandInUpload upload;
  GpuWeightCache cache(upload.function());
  const uint32_t n_layers = model.config().n_layers;
  auto in_use = cache.get(model, on(offload_split(99, n_layers), 0), 0);
  ASSERT_TRUE(in_use.ok());
  ASSERT_TRUE(cache.get(model, on(offload_split(1, n_layers), 0), 0).ok());
  EXPECT_TRUE((*in_use)[0]->split().output) << "a context's weights stay valid while it holds them";
  EXPECT_FALSE(upload.previous_released_first) << "they were still in use at the second upload";
}

TEST(GpuWeightCache, AFailedUploadHoldsNothingAndIsNotCounted) {
  const Model model = load_fixture();
  StandInUpload upload;
  GpuWeightCache cache(upload.function());
  const OffloadSplit all = offload_split(99, model.config().n_layers);
  ASSERT_TRUE(cache.get(model, on(all, 0), 0).ok());
  upload.failing = true;
  auto failed = cache.get(model, on(offload_split(1, model.config().n_layers), 0), 0);
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.error().message, HasSubstr("out of GPU memory for tensor"));
  EXPECT_EQ(cache.uploads(), 1u);
  EXPECT_EQ(cache.held_bytes(0), 0u);
  upload.failing = false;
  ASSERT_TRUE(cache.get(model, on(all, 0), 0).ok());
  EXPECT_EQ(cache.uploads(), 2u) << "the weights released before the failed upload are uploaded again";
}

TEST(GpuWeightCache, HeldBytesCountOnTheirDeviceOnly) {
  const Model model = load_fixture();
  StandInUpload upload;
  GpuWeightCache cache(upload.function());
  EXPECT_EQ(cache.held_bytes(0), 0u);
  ASSERT_TRUE(cache.get(model, on(offload_split(99, model.config().n_layers), 1), 0).ok());
  EXPECT_EQ(cache.held_bytes(0), 0u);
  EXPECT_EQ(cache.held_bytes(1), 0u) << "the stand-in's weights take no device memory";
  cache.clear();
  ASSERT_TRUE(cache.get(model, on(offload_split(99, model.config().n_layers), 1), 0).ok());
  EXPECT_EQ(cache.uploads(), 2u);
}

// ---- on a GPU ----

std::vector<float> logits_of(const Model& model, int n_gpu_layers, GpuWeightCache* cache) {
  ContextParams params;
  params.n_ctx = 64;
  params.n_gpu_layers = n_gpu_layers;
  params.gpu_weights = cache;
  auto ctx = Context::create(model, params);
  EXPECT_TRUE(ctx.ok()) << ctx.error().message;
  if (!ctx.ok()) return {};
  if (cache != nullptr && ctx->gpu() != nullptr) {
    EXPECT_EQ(ctx->gpu()->memory().weights, cache->held_bytes(0)) << "the context counts the weights it runs on";
  }
  const std::vector<int32_t> tokens = {1, 5, 9, 200, 17};
  auto logits = ctx->decode(tokens, Logits::All);
  EXPECT_TRUE(logits.ok()) << logits.error().message;
  return logits.ok() ? std::vector<float>(logits->begin(), logits->end()) : std::vector<float>{};
}

TEST(GpuWeightCacheOnGpu, ContextsSharingAnUploadAnswerAsContextsWithTheirOwn) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device visible";
  const Model model = load_fixture();
  GpuWeightCache cache;
  const std::vector<float> own = logits_of(model, 99, nullptr);
  const std::vector<float> first = logits_of(model, 99, &cache);
  const std::vector<float> second = logits_of(model, 99, &cache);
  EXPECT_EQ(cache.uploads(), 1u);
  EXPECT_EQ(first, own);
  EXPECT_EQ(second, own);
  const std::vector<float> partial_own = logits_of(model, 2, nullptr);
  EXPECT_EQ(logits_of(model, 2, &cache), partial_own);
  EXPECT_EQ(cache.uploads(), 2u);
}

}  // namespace
}  // namespace infertune
