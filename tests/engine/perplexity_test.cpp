// Perplexity's arithmetic (engine/quality/perplexity.h): the negative log-likelihood of a token is -log softmax, the
// estimate is exp(mean) with llama-perplexity's standard error, a text shorter than two chunks is refused, and a
// chunk's score does not depend on how it is cut into evaluation batches. (Against llama.cpp's logits:
// tests/engine/perplexity_crosscheck.py.)
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/context/context.h"
#include "engine/model/model.h"
#include "engine/quality/perplexity.h"
#include "test_support.h"

namespace infertune {
namespace {

TEST(Perplexity, NegativeLogLikelihoodIsMinusLogSoftmax) {
  const std::vector<float> logits = {1.0f, 2.0f, 3.0f, 1000.0f};
  EXPECT_NEAR(negative_log_likelihood(logits, 3), std::log1p(std::exp(-997.0) + std::exp(-998.0) + std::exp(-999.0)),
              1e-12);
  const std::vector<float> small = {0.0f, std::log(3.0f)};
  EXPECT_NEAR(negative_log_likelihood(small, 0), std::log(4.0), 1e-6);  // p = 1/4
  EXPECT_NEAR(negative_log_likelihood(small, 1), std::log(4.0 / 3.0), 1e-6);
}

TEST(Perplexity, TheEstimateIsExpOfTheMeanWithItsStandardError) {
  // Two chunks: nll values {1, 2} and {3}.
  const std::vector<ChunkScore> chunks = {{3.0, 5.0, 2}, {3.0, 9.0, 1}};
  const PerplexityEstimate e = PerplexityEstimate::of(chunks);
  EXPECT_EQ(e.count, 3u);
  EXPECT_NEAR(e.ppl, std::exp(2.0), 1e-12);
  const double variance = 14.0 / 3.0 - 4.0;  // E[x^2] - mean^2
  EXPECT_NEAR(e.ppl_error, std::exp(2.0) * std::sqrt(variance / 2.0), 1e-12);
  EXPECT_EQ(PerplexityEstimate::of({}).ppl, 0.0);
}

class PerplexityOnFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = Model::load(test::fixture_path("models/stories260K.gguf").string());
    ASSERT_TRUE(model.ok()) << model.error().message;
    model_ = std::make_unique<Model>(std::move(*model));
    auto ctx = Context::create(*model_, {.n_ctx = 64, .n_threads = 1});
    ASSERT_TRUE(ctx.ok()) << ctx.error().message;
    ctx_ = std::make_unique<Context>(std::move(*ctx));
    for (int i = 0; i < 200; ++i) tokens_.push_back(static_cast<int32_t>((i * 37 + 11) % 500 + 3));
  }
  std::unique_ptr<Model> model_;
  std::unique_ptr<Context> ctx_;
  std::vector<int32_t> tokens_;
};

TEST_F(PerplexityOnFixture, ATextShorterThanTwoChunksIsRefused) {
  PerplexityParams p;
  p.n_ctx = 64;
  auto scores = score_chunks(*ctx_, std::span<const int32_t>(tokens_).first(127), p);
  ASSERT_FALSE(scores.ok());
  EXPECT_NE(scores.error().message.find("at least 128"), std::string::npos) << scores.error().message;
}

TEST_F(PerplexityOnFixture, ScoresDoNotDependOnTheEvaluationBatches) {
  PerplexityParams whole;
  whole.n_ctx = 64;
  whole.bos = 1;
  PerplexityParams pieces = whole;
  pieces.n_batch = 16;
  auto a = score_chunks(*ctx_, tokens_, whole);
  auto b = score_chunks(*ctx_, tokens_, pieces);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), 3u);  // 200 tokens: three whole chunks of 64
  for (size_t c = 0; c < a->size(); ++c) {
    EXPECT_EQ((*a)[c].count, 31u);  // tokens 33..63 of each chunk
    EXPECT_NEAR((*a)[c].nll_sum, (*b)[c].nll_sum, 1e-3 * (*a)[c].nll_sum) << "chunk " << c;
  }
  PerplexityParams two = whole;
  two.n_chunks = 2;
  auto c = score_chunks(*ctx_, tokens_, two);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->size(), 2u);
}

}  // namespace
}  // namespace infertune
