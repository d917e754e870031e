// The KV cache and the position bookkeeping: a batch gives the same logits as the same tokens decoded one
// at a time (or in any split), a context cleared and reused gives the same again, thread counts do not
// change results, and a full context, an empty batch or an out-of-vocabulary id is an error that leaves
// the context usable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>

#include "forward_test_models.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

class ForwardCacheTest : public ::testing::TestWithParam<ModelArch> {
 protected:
  void SetUp() override {
    auto loaded = test::load_tiny(GetParam());
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    model_ = std::move(*loaded);
  }

  Context context(ContextParams params = {.n_ctx = 64}) {
    auto ctx = Context::create(*model_, params);
    EXPECT_TRUE(ctx.ok()) << ctx.error().message;
    return std::move(*ctx);
  }

  // Decodes tokens in pieces of the given sizes, collecting every position's logits.
  std::vector<float> decode_in_pieces(Context& ctx, std::span<const int32_t> tokens, std::span<const size_t> sizes) {
    std::vector<float> all;
    size_t start = 0;
    for (size_t size : sizes) {
      auto logits = ctx.decode(tokens.subspan(start, size), Logits::All);
      EXPECT_TRUE(logits.ok()) << logits.error().message;
      if (!logits) return all;
      all.insert(all.end(), logits->begin(), logits->end());
      start += size;
    }
    return all;
  }

  std::unique_ptr<Model> model_;
};

TEST_P(ForwardCacheTest, BatchEqualsOneTokenAtATime) {
  const auto tokens = test::test_tokens(20);
  Context batch_ctx = context();
  const std::vector<size_t> whole = {tokens.size()};
  const std::vector<float> batch = decode_in_pieces(batch_ctx, tokens, whole);

  Context step_ctx = context();
  const std::vector<size_t> singles(tokens.size(), 1);
  const std::vector<float> steps = decode_in_pieces(step_ctx, tokens, singles);
  ASSERT_EQ(batch.size(), steps.size());
  EXPECT_LE(test::logits_diff(steps, batch).max_over_std, 1e-6);
  EXPECT_EQ(step_ctx.n_past(), tokens.size());
}

TEST_P(ForwardCacheTest, AnySplitOfTheBatchGivesTheSameLogits) {
  const auto tokens = test::test_tokens(20);
  Context whole_ctx = context();
  const std::vector<size_t> whole = {tokens.size()};
  const std::vector<float> reference = decode_in_pieces(whole_ctx, tokens, whole);

  Context mixed_ctx = context();
  const std::vector<size_t> mixed = {7, 1, 1, 9, 2};
  EXPECT_LE(test::logits_diff(decode_in_pieces(mixed_ctx, tokens, mixed), reference).max_over_std, 1e-6);

  // A context that splits internally (n_ubatch 6) returns the same rows as one that does not.
  Context ubatch_ctx = context({.n_ctx = 64, .n_ubatch = 6});
  EXPECT_LE(test::logits_diff(decode_in_pieces(ubatch_ctx, tokens, whole), reference).max_over_std, 1e-6);
}

TEST_P(ForwardCacheTest, LastLogitsAreTheLastRowOfAll) {
  const auto tokens = test::test_tokens(13);
  Context all_ctx = context();
  auto all = all_ctx.decode(tokens, Logits::All);
  ASSERT_TRUE(all.ok());
  Context last_ctx = context({.n_ctx = 64, .n_ubatch = 5});
  auto last = last_ctx.decode(tokens, Logits::Last);
  ASSERT_TRUE(last.ok());
  const size_t n_vocab = model_->config().n_vocab;
  ASSERT_EQ(last->size(), n_vocab);
  EXPECT_LE(test::logits_diff(*last, all->last(n_vocab)).max_over_std, 1e-6);
}

TEST_P(ForwardCacheTest, ClearedContextStartsOver) {
  const auto tokens = test::test_tokens(9);
  Context ctx = context();
  auto first = ctx.decode(tokens, Logits::All);
  ASSERT_TRUE(first.ok());
  const std::vector<float> before(first->begin(), first->end());
  // Fill more of the cache with something else, then start over.
  ASSERT_TRUE(ctx.decode(test::test_tokens(30)).ok());
  ctx.clear();
  EXPECT_EQ(ctx.n_past(), 0u);
  auto again = ctx.decode(tokens, Logits::All);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(std::vector<float>(again->begin(), again->end()), before);
}

TEST_P(ForwardCacheTest, ThreadCountDoesNotChangeLogits) {
  const auto tokens = test::test_tokens(11);
  auto one = test::logits_all(*model_, tokens, {.n_ctx = 32, .n_threads = 1});
  auto three = test::logits_all(*model_, tokens, {.n_ctx = 32, .n_threads = 3});
  ASSERT_TRUE(one.ok() && three.ok());
  EXPECT_EQ(*one, *three);  // each output element is computed by one thread in a fixed order
}

// -t for single tokens and -tb for batches, on one pool shared by two contexts in turn: the same logits as
// one thread, for the batch steps and the one-token steps alike.
TEST_P(ForwardCacheTest, SharedPoolWithSeparateBatchThreadsMatchesOneThread) {
  ThreadPoolConfig config;
  config.n_threads = 3;
  auto pool = ThreadPool::create(config);
  ASSERT_TRUE(pool.ok()) << pool.error().message;
  const auto tokens = test::test_tokens(12);
  const std::array<size_t, 5> pieces = {7, 1, 1, 2, 1};
  Context alone = context({.n_ctx = 32, .n_threads = 1});
  const std::vector<float> want = decode_in_pieces(alone, tokens, pieces);
  for (unsigned threads : {1u, 2u}) {
    Context shared = context({.n_ctx = 32, .n_threads = threads, .n_threads_batch = 3, .pool = pool->get()});
    EXPECT_EQ(decode_in_pieces(shared, tokens, pieces), want) << "-t " << threads << " -tb 3";
  }
}

TEST_P(ForwardCacheTest, FullContextIsAnErrorAndKeepsTheCache) {
  Context ctx = context({.n_ctx = 8});
  const auto tokens = test::test_tokens(8);
  ASSERT_TRUE(ctx.decode(std::span(tokens).first(6)).ok());
  auto too_many = ctx.decode(std::span(tokens).first(3));
  ASSERT_FALSE(too_many.ok());
  EXPECT_THAT(too_many.error().message, HasSubstr("context full"));
  EXPECT_EQ(ctx.n_past(), 6u);
  // The remaining two positions are still usable, and then the next token is refused.
  ASSERT_TRUE(ctx.decode(std::span(tokens).subspan(6, 2)).ok());
  EXPECT_EQ(ctx.n_past(), 8u);
  const std::array<int32_t, 1> one = {5};
  EXPECT_FALSE(ctx.decode(one).ok());

  Context fresh = context({.n_ctx = 8});
  EXPECT_FALSE(fresh.decode(test::test_tokens(9)).ok());
  EXPECT_EQ(fresh.n_past(), 0u);
}

TEST_P(ForwardCacheTest, BadBatchesAreErrors) {
  Context ctx = context();
  auto empty = ctx.decode({});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message, HasSubstr("empty"));
  const std::array<int32_t, 3> out_of_range = {1, 512, 3};
  auto bad = ctx.decode(out_of_range);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("512"));
  EXPECT_THAT(bad.error().message, HasSubstr("batch index 1"));
  const std::array<int32_t, 1> negative = {-1};
  EXPECT_FALSE(ctx.decode(negative).ok());
  EXPECT_EQ(ctx.n_past(), 0u);
}

TEST_P(ForwardCacheTest, DefaultContextIsLlamaCpps4096) {
  Context ctx = context({});
  EXPECT_EQ(ctx.n_ctx(), kDefaultContext);
  const ModelConfig& c = model_->config();
  EXPECT_EQ(ctx.kv_bytes(), size_t{2} * c.n_layers * ctx.n_ctx() * c.k_dim() * sizeof(float));
}

INSTANTIATE_TEST_SUITE_P(Arch, ForwardCacheTest,
                         ::testing::Values(ModelArch::Llama, ModelArch::Qwen2, ModelArch::Qwen3, ModelArch::Qwen3Moe,
                                           ModelArch::Qwen2Moe, ModelArch::GptOss, ModelArch::Phi3, ModelArch::Gemma2),
                         [](const auto& info) { return test::arch_param_name(info.param); });

}  // namespace
}  // namespace infertune
