// What an offload takes on the GPU, without a GPU: the per-layer weights read off the tensor table, the
// prediction's parts as the layers and the output move over, and -ngl auto's fit.
#include <gtest/gtest.h>

#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/gpu/gpu_memory.h"
#include "engine/gpu/layer_split.h"
#include "engine/model/model.h"
#include "test_support.h"

namespace infertune {
namespace {

const char* kModel = "models/fixture-llama-Q4_K_M.gguf";

TEST(GpuMemory, WeightBytesPerLayerAddUpToTheTensorTable) {
  auto model = Model::load(test::fixture_path(kModel).string());
  ASSERT_TRUE(model.ok()) << model.error().message;
  const ModelConfig& c = model->config();
  const OffloadWeightBytes w = offload_weight_bytes(model->file(), c);
  ASSERT_EQ(w.layers.size(), c.n_layers);
  uint64_t matrices = 0, vectors = 0;
  for (const GgufTensorInfo& t : model->file().tensors()) {
    if (t.name == "token_embd.weight") continue;  // untied: the output layer has its own matrix
    (t.dims.size() >= 2 && t.dims[1] > 1 ? matrices : vectors) +=
        t.dims.size() >= 2 && t.dims[1] > 1 ? t.n_bytes : t.n_elements * sizeof(float);
  }
  uint64_t total = w.output;
  for (uint64_t b : w.layers) total += b;
  EXPECT_EQ(total, matrices + vectors);
  EXPECT_EQ(w.layers[0], w.layers[1]);  // the same mix in every layer of this file
}

TEST(GpuMemory, PredictionGrowsWithTheLayersAndTheOutputAndAutoFitsTheBudget) {
  auto model = Model::load(test::fixture_path(kModel).string());
  ASSERT_TRUE(model.ok());
  const ModelConfig& c = model->config();
  const OffloadWeightBytes w = offload_weight_bytes(model->file(), c);
  GpuMemoryInputs in{.n_cells = 256, .max_tokens = 512};
  EXPECT_EQ(predict_gpu_memory(c, w, in).total(), 0u);  // -ngl 0
  in.n_gpu_layers = 1;
  const GpuMemoryUse one = predict_gpu_memory(c, w, in);
  EXPECT_EQ(one.weights, w.layers.back());
  EXPECT_EQ(one.kv, gpu_kv_bytes_per_layer(c, 256, in.type_k, in.type_v));
  in.n_gpu_layers = static_cast<int>(c.n_layers) + 1;
  const GpuMemoryUse all = predict_gpu_memory(c, w, in);
  EXPECT_GT(all.compute, one.compute);  // the logits
  EXPECT_EQ(all.kv, one.kv * c.n_layers);
  in.kv_offload = false;
  EXPECT_EQ(predict_gpu_memory(c, w, in).kv, 0u);
  in.kv_offload = true;
  // -ngl auto on one GPU, whose free memory is the budget plus what the engine keeps free.
  const auto fit = [&](uint64_t budget) {
    const std::vector<uint64_t> free = {budget + kDeviceReserveBytes};
    return fit_split_layers(c, w, in, {}, free);
  };
  EXPECT_EQ(fit(all.total()), static_cast<int>(c.n_layers) + 1);
  EXPECT_EQ(fit(all.total() - 1), static_cast<int>(c.n_layers));
  EXPECT_EQ(fit(one.total()), 1);
  EXPECT_EQ(fit(0), 0);
}

TEST(GpuMemory, ActivationsFollowTheUbatchAndTheBatchedProductsBuffers) {
  ModelConfig c;
  c.n_layers = 2;
  c.n_embd = 64;
  c.n_head = 2;
  c.n_head_kv = 1;
  c.head_dim = c.head_dim_v = 32;
  c.n_ff = 128;
  c.n_vocab = 100;
  c.n_rot = 32;
  const ActivationSizes one = activation_sizes(c, 1, false);
  EXPECT_EQ(one.weights_f16, 0u);  // a token at a time: the matrix-vector kernel needs no f16 copies
  EXPECT_EQ(one.logits, 0u);
  const ActivationSizes batch = activation_sizes(c, 64, true);
  EXPECT_EQ(batch.x, 64u * 64 * 4);
  EXPECT_EQ(batch.logits, 64u * 100 * 4);
  EXPECT_EQ(batch.weights_f16, kF16ChunkValues * 2);
  EXPECT_EQ(batch.input_f16, 64u * 128 * 2);
  EXPECT_EQ(batch.window_rope, 0u);

  // A sliding window adds each token's windowed key range and a second table of rope angles.
  c.sliding_window = 16;
  const ActivationSizes windowed = activation_sizes(c, 64, true);
  EXPECT_EQ(windowed.window_key_offset, 64u * 4);
  EXPECT_EQ(windowed.window_n_keys, 64u * 4);
  EXPECT_EQ(windowed.window_rope, batch.rope);
  EXPECT_EQ(windowed.total(), batch.total() + 2 * 64 * 4 + 2 * batch.rope);
}

}  // namespace
}  // namespace infertune
