// Embeddings (ContextParams::embeddings, engine/embedding): a token's embedding is the final-normed hidden state,
// so the output matrix applied to it gives that token's logits from a context that keeps logits; pooling is
// the mean, first or last of a sequence's states; inputs packed into shared batches, cut across batches, or
// embedded alone give the same vectors; normalization follows llama.cpp's --embd-normalize modes; bad inputs
// and the model's pooling metadata are checked; a bidirectional model (attention.causal = false) sees whole inputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "engine/embedding/embedder.h"
#include "engine/embedding/embedding_norm.h"
#include "engine/embedding/pooling.h"
#include "forward_test_models.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

std::vector<int32_t> input(size_t n, uint32_t seed) {
  std::vector<int32_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<int32_t>(3 + (i * 97 + seed * 53 + 11) % 509);
  return p;
}

double max_abs_diff(std::span<const float> a, std::span<const float> b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
  return d;
}

class EmbeddingTest : public ::testing::TestWithParam<ModelArch> {
 protected:
  void SetUp() override {
    auto loaded = test::load_tiny(GetParam());
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    model_ = std::move(*loaded);
  }

  Context context(ContextParams params) {
    auto ctx = Context::create(*model_, params);
    EXPECT_TRUE(ctx.ok()) << ctx.error().message;
    return std::move(*ctx);
  }

  std::vector<Embedding> embed(const std::vector<std::vector<int32_t>>& inputs, EmbeddingParams params,
                               ContextParams ctx_params = {.n_ctx = 256, .n_seq_max = 4, .embeddings = true}) {
    Context ctx = context(ctx_params);
    Embedder embedder(ctx, params);
    auto out = embedder.embed(inputs);
    EXPECT_TRUE(out.ok()) << out.error().message;
    EXPECT_EQ(ctx.kv_cache().n_free(), ctx.n_ctx()) << "the cache is left empty";
    return out ? *out : std::vector<Embedding>{};
  }

  std::unique_ptr<Model> model_;
};

TEST_P(EmbeddingTest, TheOutputMatrixTurnsATokensEmbeddingIntoItsLogits) {
  const ModelConfig& c = model_->config();
  const WeightMatrix& out = model_->weights().output;
  ASSERT_EQ(out.type, GgmlType::F32);
  ASSERT_EQ(out.layout, WeightLayout::rows);
  const auto tokens = input(9, 1);

  Context with_logits = context({.n_ctx = 64});
  auto logits = with_logits.decode(tokens, Logits::All);
  ASSERT_TRUE(logits.ok()) << logits.error().message;
  Context with_embd = context({.n_ctx = 64, .embeddings = true});
  auto embd = with_embd.decode(tokens, Logits::All);
  ASSERT_TRUE(embd.ok()) << embd.error().message;
  ASSERT_EQ(embd->size(), tokens.size() * c.n_embd);
  EXPECT_TRUE(with_embd.logits().empty());
  EXPECT_FALSE(with_embd.logits_ith(0).ok());

  std::vector<float> w(out.n_rows * out.n_cols);
  std::memcpy(w.data(), out.data.data(), w.size() * sizeof(float));
  double worst = 0;
  for (size_t t = 0; t < tokens.size(); ++t) {
    for (size_t v = 0; v < c.n_vocab; ++v) {
      double dot = 0;
      for (size_t d = 0; d < c.n_embd; ++d) dot += static_cast<double>(w[v * c.n_embd + d]) * (*embd)[t * c.n_embd + d];
      if (c.final_logit_softcap != 0) dot = c.final_logit_softcap * std::tanh(dot / c.final_logit_softcap);
      worst = std::max(worst, std::fabs(dot - (*logits)[t * c.n_vocab + v]));
    }
  }
  EXPECT_LT(worst, 1e-3) << "the logits are the output matrix times the embeddings";
}

TEST_P(EmbeddingTest, PoolingIsTheMeanFirstOrLastOfTheTokenStates) {
  const std::vector<std::vector<int32_t>> inputs = {input(7, 2), input(12, 3)};
  const auto states = embed(inputs, {.pooling = Pooling::none, .normalize = -1});
  const auto mean = embed(inputs, {.pooling = Pooling::mean, .normalize = -1});
  const auto cls = embed(inputs, {.pooling = Pooling::cls, .normalize = -1});
  const auto last = embed(inputs, {.pooling = Pooling::last, .normalize = -1});
  ASSERT_EQ(states.size(), 2u);
  const size_t n_embd = model_->config().n_embd;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(states[i].n_rows(), inputs[i].size());
    ASSERT_EQ(mean[i].n_rows(), 1u);
    std::vector<float> average(n_embd);
    for (size_t r = 0; r < states[i].n_rows(); ++r) {
      for (size_t d = 0; d < n_embd; ++d) average[d] += states[i].row(r)[d] / static_cast<float>(inputs[i].size());
    }
    EXPECT_LT(max_abs_diff(mean[i].row(0), average), 1e-5);
    EXPECT_LT(max_abs_diff(cls[i].row(0), states[i].row(0)), 1e-6);
    EXPECT_LT(max_abs_diff(last[i].row(0), states[i].row(inputs[i].size() - 1)), 1e-6);
  }
}

TEST_P(EmbeddingTest, PackedAndCutInputsGiveTheVectorsOfInputsAlone) {
  const std::vector<std::vector<int32_t>> inputs = {input(5, 4), input(30, 5), input(1, 6), input(17, 7),
                                                    input(9, 8), input(40, 9), input(3, 10)};
  for (Pooling pooling : {Pooling::mean, Pooling::last, Pooling::none}) {
    SCOPED_TRACE(pooling_name(pooling));
    // -b 16 and 4 sequences: several inputs share a batch, the longer ones are cut across batches.
    const auto packed = embed(inputs, {.pooling = pooling},
                              {.n_ctx = 64, .n_batch = 16, .n_ubatch = 8, .n_seq_max = 4, .embeddings = true});
    ASSERT_EQ(packed.size(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const auto alone = embed({inputs[i]}, {.pooling = pooling});
      ASSERT_EQ(alone.size(), 1u);
      ASSERT_EQ(packed[i].values.size(), alone[0].values.size());
      EXPECT_LT(max_abs_diff(packed[i].values, alone[0].values), 1e-5) << "input " << i;
    }
  }
}

TEST_P(EmbeddingTest, PooledVectorsAreNormalizedAsAsked) {
  const auto euclid = embed({input(6, 11)}, {.pooling = Pooling::mean});
  ASSERT_EQ(euclid.size(), 1u);
  double sq = 0;
  for (float v : euclid[0].values) sq += static_cast<double>(v) * v;
  EXPECT_NEAR(std::sqrt(sq), 1.0, 1e-5);
}

TEST_P(EmbeddingTest, BadInputsAreRefusedAndTheCacheIsLeftEmpty) {
  Context ctx = context({.n_ctx = 16, .embeddings = true});
  Embedder embedder(ctx, {});
  auto empty = embedder.embed(std::vector<std::vector<int32_t>>{input(3, 1), {}});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message, HasSubstr("input 1 is empty"));
  auto too_long = embedder.embed(std::vector<std::vector<int32_t>>{input(17, 1)});
  ASSERT_FALSE(too_long.ok());
  EXPECT_THAT(too_long.error().message, HasSubstr("input 0 has 17 tokens, more than the context's 16 (-c)"));
  auto bad_token = embedder.embed(std::vector<std::vector<int32_t>>{{1, 2, 100000}});
  ASSERT_FALSE(bad_token.ok());
  EXPECT_THAT(bad_token.error().message, HasSubstr("outside the vocabulary"));
  EXPECT_EQ(ctx.kv_cache().n_free(), ctx.n_ctx());
  EXPECT_TRUE(embedder.embed(std::vector<std::vector<int32_t>>{input(16, 1)}).ok());

  Context logits = context({.n_ctx = 16});
  Embedder wrong(logits, {});
  auto refused = wrong.embed(std::vector<std::vector<int32_t>>{input(3, 1)});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("keeps logits"));
}

INSTANTIATE_TEST_SUITE_P(Archs, EmbeddingTest,
                         ::testing::Values(ModelArch::Llama, ModelArch::Qwen2, ModelArch::Gemma3, ModelArch::Qwen3,
                                           ModelArch::Qwen3Moe),
                         [](const auto& info) { return test::arch_param_name(info.param); });

TEST(EmbeddingNorm, ScalesAsLlamaCppsModes) {
  auto normalized = [](std::vector<float> v, int mode) {
    normalize_embedding(v, mode);
    return v;
  };
  const std::vector<float> v = {3, -4, 0};
  EXPECT_THAT(normalized(v, -1), ::testing::ElementsAre(3, -4, 0));
  EXPECT_THAT(normalized(v, 0), ::testing::ElementsAre(::testing::FloatEq(3 * 32760.0f / 4), -32760, 0));
  EXPECT_THAT(normalized(v, 1), ::testing::ElementsAre(::testing::FloatEq(3.0f / 7), ::testing::FloatEq(-4.0f / 7), 0));
  EXPECT_THAT(normalized(v, 2), ::testing::ElementsAre(::testing::FloatEq(0.6f), ::testing::FloatEq(-0.8f), 0));
  const float p3 = std::cbrt(27.0f + 64.0f);
  EXPECT_THAT(normalized(v, 3), ::testing::ElementsAre(::testing::FloatEq(3 / p3), ::testing::FloatEq(-4 / p3), 0));
  EXPECT_THAT(normalized({0, 0}, 2), ::testing::ElementsAre(0, 0));
}

TEST(EmbeddingPooling, NamesAndTheModelsOwn) {
  for (Pooling p : {Pooling::none, Pooling::mean, Pooling::cls, Pooling::last}) {
    auto parsed = parse_pooling(pooling_name(p));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, p);
  }
  auto rank = parse_pooling("rank");
  ASSERT_FALSE(rank.ok());
  EXPECT_THAT(rank.error().message, HasSubstr("classification head"));
  EXPECT_THAT(parse_pooling("avg").error().message, HasSubstr("expected none, mean, cls or last"));
  ModelConfig c;
  EXPECT_EQ(*model_pooling(c), Pooling::none);
  c.pooling_type = 3;
  EXPECT_EQ(*model_pooling(c), Pooling::last);
  c.pooling_type = 4;
  EXPECT_FALSE(model_pooling(c).ok());
}

// The tiny llama with `keys` set.
Result<Model> tiny_llama_with(std::vector<GgufKeyValue> keys) {
  auto bytes = test::synth_tiny(ModelArch::Llama, "f32");
  if (!bytes) return bytes.error();
  auto base = Model::from_bytes(std::move(*bytes));
  if (!base) return base.error();
  test::GgufEdit edit;
  edit.set = std::move(keys);
  auto rewritten = test::rewrite_gguf(base->file(), edit);
  if (!rewritten) return rewritten.error();
  return Model::from_bytes(std::move(*rewritten));
}

TEST(EmbeddingModelKeys, PoolingTypeIsReadAndUnknownOnesRefused) {
  auto pooled = tiny_llama_with({{"llama.pooling_type", GgufValue{uint32_t{1}}}});
  ASSERT_TRUE(pooled.ok()) << pooled.error().message;
  EXPECT_EQ(*model_pooling(pooled->config()), Pooling::mean);
  auto unknown = tiny_llama_with({{"llama.pooling_type", GgufValue{uint32_t{9}}}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("llama.pooling_type = 9"));
}

// attention.causal = false: every token sees its whole input, so an early token's state depends on the later ones;
// such a model gives embeddings only, and its inputs go whole into one ubatch (packed, never cut).
TEST(EmbeddingBidirectional, TokensSeeTheirWholeInputWhichGoesInOneUbatch) {
  auto model = tiny_llama_with({{"llama.attention.causal", GgufValue{false}}});
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_FALSE(model->config().causal_attention);
  auto logits = Context::create(*model, {.n_ctx = 64});
  ASSERT_FALSE(logits.ok());
  EXPECT_THAT(logits.error().message, HasSubstr("a bidirectional model computes embeddings, not logits"));

  auto ctx = Context::create(*model, {.n_ctx = 64, .n_batch = 32, .n_ubatch = 16, .n_seq_max = 4, .embeddings = true});
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  Embedder states(*ctx, {.pooling = Pooling::none, .normalize = -1});
  std::vector<int32_t> a = input(6, 1);
  std::vector<int32_t> b = a;
  b.back() = a.back() == 7 ? 8 : 7;  // the last token differs
  auto both = states.embed(std::vector<std::vector<int32_t>>{a, b});
  ASSERT_TRUE(both.ok()) << both.error().message;
  EXPECT_GT(max_abs_diff((*both)[0].row(0), (*both)[1].row(0)), 1e-4) << "the first token sees the last";

  // Packed into shared ubatches, inputs give their vectors alone.
  const std::vector<std::vector<int32_t>> inputs = {input(5, 2), input(11, 3), input(16, 4), input(3, 5), input(9, 6)};
  Embedder mean(*ctx, {.pooling = Pooling::mean});
  auto packed = mean.embed(inputs);
  ASSERT_TRUE(packed.ok()) << packed.error().message;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto alone = mean.embed(std::vector<std::vector<int32_t>>{inputs[i]});
    ASSERT_TRUE(alone.ok());
    EXPECT_LT(max_abs_diff((*packed)[i].values, (*alone)[0].values), 1e-5) << "input " << i;
  }
  EXPECT_EQ(Embedder::max_input_tokens(*ctx), 16u);
  auto cut = mean.embed(std::vector<std::vector<int32_t>>{input(17, 7)});
  ASSERT_FALSE(cut.ok());
  EXPECT_THAT(cut.error().message, HasSubstr("takes an input whole in one ubatch: at most 16 (-ub)"));

  // The context itself keeps a sequence whole: a batch is one ubatch, and a sequence cannot come in two batches.
  EXPECT_EQ(ctx->n_batch(), 16u);
  ASSERT_TRUE(ctx->decode(input(4, 8)).ok());
  auto second = ctx->decode(input(4, 9));
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.error().message, HasSubstr("takes a sequence whole in one batch"));
}

}  // namespace
}  // namespace infertune
