// Model variants the forward pass must honour, each checked against an equivalent model built another
// way: tied embeddings (no output.weight) against an explicit copy of token_embd as output.weight; llama-3
// rope_freqs factors against none (all ones) and against linear rope scaling (all twos = factor 2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "forward_test_models.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

Model load(Result<std::vector<std::byte>> bytes) {
  EXPECT_TRUE(bytes.ok()) << bytes.error().message;
  auto model = Model::from_bytes(std::move(*bytes));
  EXPECT_TRUE(model.ok()) << model.error().message;
  return std::move(*model);
}

std::vector<float> logits(const Model& model) {
  auto result = test::logits_all(model, test::test_tokens(16));
  EXPECT_TRUE(result.ok()) << result.error().message;
  return result.ok() ? *result : std::vector<float>{};
}

class TiedEmbeddingsTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TiedEmbeddingsTest, OutputReusesTokenEmbd) {
  Model tied = load(test::synth_tiny(ModelArch::Llama, GetParam(), false, /*tied=*/true));
  ASSERT_TRUE(tied.config().tied_output);
  EXPECT_EQ(tied.file().find_tensor("output.weight"), nullptr);
  const ModelWeights& w = tied.weights();
  EXPECT_EQ(w.output.data.data(), w.token_embd.data.data());
  EXPECT_EQ(w.output.n_rows, tied.config().n_vocab);

  // The same file with token_embd's bytes stored again as output.weight computes the same logits.
  const GgufTensorInfo* embd = tied.file().find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  const auto embd_bytes = tied.file().tensor_data(*embd);
  test::GgufEdit edit;
  edit.add.push_back({"output.weight", embd->dims, embd->type, {embd_bytes.begin(), embd_bytes.end()}});
  Model untied = load(test::rewrite_gguf(tied.file(), edit));
  ASSERT_FALSE(untied.config().tied_output);
  EXPECT_NE(untied.weights().output.data.data(), untied.weights().token_embd.data.data());
  EXPECT_EQ(logits(tied), logits(untied));
}

INSTANTIATE_TEST_SUITE_P(Types, TiedEmbeddingsTest, ::testing::Values("f32", "q8_0", "q4_k_m"));

std::vector<std::byte> rope_factors(float value, size_t n) { return test::as_bytes(std::vector<float>(n, value)); }

TEST(RopeVariantsTest, RopeFreqsFactorsAreApplied) {
  Model base = load(test::synth_tiny(ModelArch::Llama, "f32"));
  const uint64_t n_pairs = base.config().n_rot / 2;

  test::GgufEdit ones;
  ones.add.push_back({"rope_freqs.weight", {n_pairs}, GgmlType::F32, rope_factors(1.0f, n_pairs)});
  Model with_ones = load(test::rewrite_gguf(base.file(), ones));
  ASSERT_TRUE(with_ones.config().has_rope_freqs);
  ASSERT_EQ(with_ones.weights().rope_freqs.size(), n_pairs);
  EXPECT_EQ(logits(with_ones), logits(base));

  // Dividing every frequency by 2 is linear scaling by 2: the same angles, the same logits.
  test::GgufEdit twos;
  twos.add.push_back({"rope_freqs.weight", {n_pairs}, GgmlType::F32, rope_factors(2.0f, n_pairs)});
  Model with_twos = load(test::rewrite_gguf(base.file(), twos));
  test::GgufEdit linear;
  linear.set.push_back({"llama.rope.scaling.type", GgufValue{std::string("linear")}});
  linear.set.push_back({"llama.rope.scaling.factor", GgufValue{2.0f}});
  Model scaled = load(test::rewrite_gguf(base.file(), linear));
  ASSERT_EQ(scaled.config().rope_scaling_type, "linear");
  const std::vector<float> twos_logits = logits(with_twos);
  EXPECT_EQ(twos_logits, logits(scaled));
  EXPECT_GT(test::logits_diff(twos_logits, logits(base)).rms_over_std, 1e-3);  // and it does change something
}

// YaRN runs (checked against llama.cpp in llama_cpp_rope_yarn.synth, against the formula in
// ops_rope_yarn_test) and is neither plain nor linear rope; longrope is refused with the key named.
TEST(RopeVariantsTest, YarnScalingRunsAndLongropeIsRefused) {
  Model base = load(test::synth_tiny(ModelArch::Llama, "f32"));
  auto scaled = [&](const char* type) {
    test::GgufEdit edit;
    edit.set.push_back({"llama.rope.scaling.type", GgufValue{std::string(type)}});
    edit.set.push_back({"llama.rope.scaling.factor", GgufValue{4.0f}});
    edit.set.push_back({"llama.rope.scaling.original_context_length", GgufValue{uint32_t{16}}});
    return test::rewrite_gguf(base.file(), edit);
  };
  Model yarn = load(scaled("yarn"));
  Model linear = load(scaled("linear"));
  const std::vector<float> yarn_logits = logits(yarn);
  EXPECT_GT(test::logits_diff(yarn_logits, logits(base)).rms_over_std, 1e-3);
  EXPECT_GT(test::logits_diff(yarn_logits, logits(linear)).rms_over_std, 1e-3);
  auto longrope = scaled("longrope");
  ASSERT_TRUE(longrope.ok());
  auto refused = Model::from_bytes(std::move(*longrope));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("llama.rope.scaling.type = 'longrope' is not supported"));
}

}  // namespace
}  // namespace infertune
