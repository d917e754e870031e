// Loading a Model: weights bound with the shapes and types of the file, in place in the mapping (or in
// an owned copy with --no-mmap, computing the same logits), and clear errors for files that cannot be
// run: missing, malformed, or with a weight type that has no matmul kernel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "engine/model/model.h"
#include "forward_test_models.h"
#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

std::string fixture(const char* name) { return test::fixture_path(std::string("models/") + name).string(); }

TEST(ModelLoadTest, BindsEveryWeightOfTheFixture) {
  auto model = Model::load(fixture("fixture-llama-Q4_K_M.gguf"), {.repack = false});
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_TRUE(model->mapped());
  const ModelConfig& c = model->config();
  EXPECT_EQ(c.n_layers, 4u);
  EXPECT_EQ(c.n_embd, 256u);
  EXPECT_EQ(c.n_head_kv, 2u);
  EXPECT_FALSE(c.tied_output);
  const ModelWeights& w = model->weights();
  ASSERT_EQ(w.layers.size(), 4u);
  EXPECT_EQ(w.token_embd.type, GgmlType::Q4_K);
  EXPECT_EQ(w.output.type, GgmlType::Q6_K);
  EXPECT_EQ(w.output.name, "output.weight");
  EXPECT_EQ(w.output_norm.size(), 256u);
  const LayerWeights& l2 = w.layers[2];
  EXPECT_EQ(l2.attn_k.n_cols, 256u);
  EXPECT_EQ(l2.attn_k.n_rows, 64u);  // n_head_kv * head_dim
  EXPECT_EQ(l2.attn_v.type, GgmlType::Q6_K);
  EXPECT_EQ(l2.ffn_down.n_cols, 512u);
  EXPECT_EQ(l2.ffn_down.n_rows, 256u);
  EXPECT_TRUE(l2.attn_q_bias.empty());  // llama has no biases

  // Without repacking the views point into the file's own bytes: no copy.
  const GgufTensorInfo* q = model->file().find_tensor("blk.2.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(l2.attn_q.data.data(), model->file().tensor_data(*q).data());
  EXPECT_EQ(l2.attn_q.data.size(), q->n_bytes);
  EXPECT_EQ(model->tensor_bytes(), 1519872u);  // `inspect`'s total for this file
}

TEST(ModelLoadTest, Qwen2BiasesAreDecoded) {
  auto model = Model::load(fixture("fixture-qwen2-Q8_0.gguf"));
  ASSERT_TRUE(model.ok()) << model.error().message;
  const LayerWeights& l0 = model->weights().layers[0];
  EXPECT_EQ(l0.attn_q_bias.size(), model->config().q_dim());
  EXPECT_EQ(l0.attn_k_bias.size(), model->config().k_dim());
  EXPECT_EQ(l0.attn_v_bias.size(), model->config().v_dim());
  const GgufTensorInfo* bias = model->file().find_tensor("blk.0.attn_k.bias");
  ASSERT_NE(bias, nullptr);
  ASSERT_EQ(bias->type, GgmlType::F32);
  const auto raw = model->file().tensor_data(*bias);
  float first = 0;
  std::memcpy(&first, raw.data(), sizeof first);
  EXPECT_EQ(l0.attn_k_bias[0], first);
}

TEST(ModelLoadTest, NoMmapReadsACopyThatComputesTheSame) {
  auto mapped = Model::load(fixture("fixture-qwen2-f32.gguf"));
  auto owned = Model::load(fixture("fixture-qwen2-f32.gguf"), {.use_mmap = false});
  ASSERT_TRUE(mapped.ok() && owned.ok());
  EXPECT_FALSE(owned->mapped());
  EXPECT_NE(owned->weights().token_embd.data.data(), mapped->weights().token_embd.data.data());
  EXPECT_EQ(owned->config(), mapped->config());
  const auto tokens = test::test_tokens(10);
  auto a = test::logits_all(*mapped, tokens);
  auto b = test::logits_all(*owned, tokens);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(ModelLoadTest, MlockLocksOrWarns) {
  auto model = Model::load(fixture("stories260K.gguf"), {.mlock = true});
  ASSERT_TRUE(model.ok()) << model.error().message;
  // A small RLIMIT_MEMLOCK makes mlock fail; that is a warning, never a load failure.
  EXPECT_TRUE(model->locked() || !model->warnings().empty());
  if (!model->locked()) {
    EXPECT_THAT(model->warnings()[0], HasSubstr("mlock"));
  }
}

TEST(ModelLoadTest, MissingFileNamesThePath) {
  for (bool mmap : {true, false}) {
    auto model = Model::load("/nonexistent/model.gguf", {.use_mmap = mmap});
    ASSERT_FALSE(model.ok());
    EXPECT_THAT(model.error().message, HasSubstr("/nonexistent/model.gguf"));
  }
}

TEST(ModelLoadTest, TruncatedFileIsAnError) {
  auto bytes = test::read_file_bytes(fixture("fixture-llama-Q8_0.gguf"));
  bytes.resize(bytes.size() / 2);
  const auto path = test::temp_dir() / "truncated.gguf";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  for (bool mmap : {true, false}) {
    auto model = Model::load(path.string(), {.use_mmap = mmap});
    ASSERT_FALSE(model.ok());
    EXPECT_THAT(model.error().message, HasSubstr("truncated.gguf"));
  }
}

TEST(ModelLoadTest, WeightTypeWithoutKernelIsRefusedAtLoad) {
  auto source = Model::load(fixture("fixture-llama-f32.gguf"));
  ASSERT_TRUE(source.ok());
  test::GgufEdit edit;
  edit.retype["blk.1.ffn_up.weight"] = GgmlType::IQ2_XXS;  // a type with neither codec nor kernel
  auto bytes = test::rewrite_gguf(source->file(), edit);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  auto model = Model::from_bytes(std::move(*bytes), "retyped.gguf");
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.error().message, HasSubstr("blk.1.ffn_up.weight"));
  EXPECT_THAT(model.error().message, HasSubstr("iq2_xxs"));
}

TEST(ModelLoadTest, ConfigErrorsPassThrough) {
  auto source = Model::load(fixture("fixture-llama-f32.gguf"));
  ASSERT_TRUE(source.ok());
  test::GgufEdit edit;
  edit.set.push_back({"llama.attention.head_count_kv", GgufValue{uint32_t{3}}});
  auto bytes = test::rewrite_gguf(source->file(), edit);
  ASSERT_TRUE(bytes.ok());
  auto model = Model::from_bytes(std::move(*bytes), "bad-heads.gguf");
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.error().message, HasSubstr("head_count_kv"));
}

}  // namespace
}  // namespace infertune
