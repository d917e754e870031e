// The Scheduler's end tokens: a token of SchedulerParams::end_tokens ends a request (kept as its last token),
// and a request with ignore_eos never samples one and runs to max_new_tokens. Cancelling a running request
// frees its cells at once; cancelling an unknown or finished one changes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "engine/context/context.h"
#include "engine/model/model.h"
#include "engine/scheduler/scheduler.h"
#include "test_support.h"

namespace infertune {
namespace {

class SchedulerEndTokens : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = Model::load(test::fixture_path("models/fixture-llama-f32.gguf").string());
    ASSERT_TRUE(model) << model.error().message;
    model_ = std::make_unique<Model>(std::move(*model));
  }

  // The greedy tokens of the prompt with `end` as an end token, with and without ignore_eos.
  std::vector<int32_t> generate(const std::vector<int32_t>& end, bool ignore_eos) {
    auto ctx = Context::create(*model_, {.n_ctx = 64, .n_threads = 1, .n_batch = 32, .n_seq_max = 1});
    EXPECT_TRUE(ctx) << ctx.error().message;
    SchedulerParams params{.n_parallel = 1, .stop_at_eos = true};
    params.end_tokens = end;
    auto scheduler = Scheduler::create(*ctx, params);
    SamplingParams greedy;
    greedy.temperature = 0;
    EXPECT_TRUE(
        scheduler->submit({.prompt = prompt_, .max_new_tokens = 8, .sampling = greedy, .ignore_eos = ignore_eos}));
    auto results = scheduler->run();
    EXPECT_TRUE(results) << results.error().message;
    return results && !results->empty() ? (*results)[0].tokens : std::vector<int32_t>{};
  }

  std::unique_ptr<Model> model_;
  std::vector<int32_t> prompt_ = {1, 17, 99, 250, 3};
};

TEST_F(SchedulerEndTokens, AnEndTokenEndsTheRequestUnlessItIgnoresEos) {
  const std::vector<int32_t> free_run = generate({}, false);
  ASSERT_EQ(free_run.size(), 8u);
  const int32_t third = free_run[2];
  const std::vector<int32_t> ended = generate({third}, false);
  EXPECT_EQ(ended, std::vector<int32_t>(free_run.begin(), free_run.begin() + 3));
  const std::vector<int32_t> ignoring = generate({third}, true);
  ASSERT_EQ(ignoring.size(), 8u);
  EXPECT_EQ(std::count(ignoring.begin(), ignoring.end(), third), 0);
  EXPECT_EQ(std::vector<int32_t>(ignoring.begin(), ignoring.begin() + 2),
            std::vector<int32_t>(free_run.begin(), free_run.begin() + 2));
}

TEST_F(SchedulerEndTokens, CancellingARunningRequestFreesItsCells) {
  auto ctx = Context::create(*model_, {.n_ctx = 64, .n_threads = 1, .n_batch = 32, .n_seq_max = 2});
  ASSERT_TRUE(ctx) << ctx.error().message;
  auto scheduler = Scheduler::create(*ctx, {.n_parallel = 2, .stop_at_eos = false});
  ASSERT_TRUE(scheduler);
  auto a = scheduler->submit({.prompt = prompt_, .max_new_tokens = 20});
  auto b = scheduler->submit({.prompt = {4, 5, 6}, .max_new_tokens = 20});
  ASSERT_TRUE(a && b);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(scheduler->step());
  const uint32_t used = ctx->kv_cache().n_used();
  auto cancelled = scheduler->cancel(*a);
  ASSERT_TRUE(cancelled);
  EXPECT_TRUE(*cancelled);
  EXPECT_LT(ctx->kv_cache().n_used(), used);
  EXPECT_FALSE(*scheduler->cancel(*a));    // already gone
  EXPECT_FALSE(*scheduler->cancel(1234));  // never existed
  auto results = scheduler->run();
  ASSERT_TRUE(results);
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ((*results)[0].id, *b);
  EXPECT_EQ((*results)[0].tokens.size(), 20u);
}

}  // namespace
}  // namespace infertune
