// The memory model against what the engine allocates for the fixture model: the weights a loaded Model
// holds, the KV cache a Context reserves, and the activation buffers of its forward pass.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <vector>

#include "engine/arch/forward.h"
#include "engine/context/context.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/model.h"
#include "sweeps/plan/memory_model.h"
#include "test_support.h"

namespace infertune {
namespace {

std::string fixture(const std::string& name) { return test::fixture_path("models/" + name).string(); }

template <class T>
uint64_t bytes_of(const std::vector<T>& v) {
  return v.size() * sizeof(T);
}

struct KvCase {
  GgmlType k, v;
  uint32_t n_ctx, n_seq;
};

class MemoryModelKv : public ::testing::TestWithParam<KvCase> {};

TEST_P(MemoryModelKv, PredictionMatchesTheContextsAllocation) {
  const KvCase c = GetParam();
  const std::string path = fixture("fixture-llama-Q8_0.gguf");
  auto model = Model::load(path);
  ASSERT_TRUE(model) << model.error().message;
  auto shape = read_model_shape(path);
  ASSERT_TRUE(shape) << shape.error().message;
  auto ctx = Context::create(*model, {.n_ctx = c.n_ctx, .n_seq_max = c.n_seq, .type_k = c.k, .type_v = c.v});
  ASSERT_TRUE(ctx) << ctx.error().message;
  auto p = predict_memory(*shape, {.n_ctx = c.n_ctx, .type_k = c.k, .type_v = c.v});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->kv, ctx->kv_bytes());
  EXPECT_EQ(p->kv, ctx->kv_bytes_per_token() * c.n_ctx);
  EXPECT_EQ(p->weights, model->tensor_bytes());
}

INSTANTIATE_TEST_SUITE_P(KvTypes, MemoryModelKv,
                         ::testing::Values(KvCase{GgmlType::F32, GgmlType::F32, 256, 1},
                                           KvCase{GgmlType::F16, GgmlType::F16, 512, 4},
                                           KvCase{GgmlType::Q8_0, GgmlType::F16, 128, 2},
                                           KvCase{GgmlType::Q4_0, GgmlType::BF16, 1000, 1}));

TEST(MemoryModel, ComputeIsTheForwardScratchOfTheLargestPiecePlusLogits) {
  auto shape = read_model_shape(fixture("fixture-llama-f32.gguf"));
  ASSERT_TRUE(shape) << shape.error().message;
  for (uint32_t n : {1u, 7u, 64u}) {
    ForwardScratch scratch;
    ASSERT_TRUE(scratch.reserve(shape->config, n));
    const uint64_t allocated = bytes_of(scratch.x) + bytes_of(scratch.xn) + bytes_of(scratch.q) + bytes_of(scratch.k) +
                               bytes_of(scratch.v) + bytes_of(scratch.attn) + bytes_of(scratch.gate) +
                               bytes_of(scratch.up) + bytes_of(scratch.proj);
    EXPECT_EQ(forward_scratch_bytes(shape->config, n), allocated) << n;
  }
  // A prompt of 300 with -b 256 -ub 128: pieces of 128 tokens; one row of logits kept.
  auto p = predict_memory(*shape, {.n_ctx = 300, .n_batch = 256, .n_ubatch = 128, .max_decode_tokens = 300});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->compute, forward_scratch_bytes(shape->config, 128) + shape->config.n_vocab * sizeof(float));
}

TEST(MemoryModel, NoMmapCountsTheWholeFile) {
  const std::string path = fixture("fixture-llama-Q4_K_M.gguf");
  auto shape = read_model_shape(path);
  ASSERT_TRUE(shape);
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file);
  auto mapped = predict_memory(*shape, {.n_ctx = 16, .use_mmap = true});
  auto read = predict_memory(*shape, {.n_ctx = 16, .use_mmap = false});
  ASSERT_TRUE(mapped && read);
  EXPECT_EQ(read->weights, file->file_size());
  EXPECT_LT(mapped->weights, read->weights);
}

TEST(MemoryModel, QuantVariantOfTheF32FixtureSizesLikeLlamaCppsQ8_0) {
  // llama.cpp's Q8_0 file stores every matrix in q8_0 and the norm vectors in f32: the variant estimate
  // of the f32 fixture must come out the same.
  auto variant = read_model_shape(fixture("fixture-llama-f32.gguf"), GgmlType::Q8_0);
  auto real = read_model_shape(fixture("fixture-llama-Q8_0.gguf"));
  ASSERT_TRUE(variant && real);
  EXPECT_EQ(variant->tensor_bytes, real->tensor_bytes);
}

TEST(MemoryModel, KvTypeThatDoesNotFitTheHeadsIsAnError) {
  ModelShape shape;
  shape.config.n_layers = 1;
  shape.config.n_head_kv = 1;
  shape.config.head_dim = 16;  // q4_0 blocks are 32 values
  shape.config.head_dim_v = 16;
  auto p = predict_memory(shape, {.n_ctx = 8, .type_k = GgmlType::Q4_0});
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("multiple of 32"), std::string::npos) << p.error().message;
}

}  // namespace
}  // namespace infertune
