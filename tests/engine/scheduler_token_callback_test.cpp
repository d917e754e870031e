// The Scheduler's on_token callback: called once per generated token, with the request that got it, in the
// order each request's tokens were produced, so the callback's view equals the finished results.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "engine/context/context.h"
#include "engine/model/model.h"
#include "engine/scheduler/scheduler.h"
#include "test_support.h"

namespace infertune {
namespace {

TEST(SchedulerTokenCallback, SeesEveryTokenOfEveryRequestInOrder) {
  auto model = Model::load(test::fixture_path("models/fixture-llama-f32.gguf").string());
  ASSERT_TRUE(model) << model.error().message;
  auto ctx = Context::create(*model, {.n_ctx = 128, .n_threads = 1, .n_batch = 32, .n_seq_max = 3});
  ASSERT_TRUE(ctx) << ctx.error().message;
  std::map<RequestId, std::vector<int32_t>> seen;
  SchedulerParams params{.n_parallel = 3, .stop_at_eos = false};
  params.on_token = [&seen](RequestId id, int32_t token) { seen[id].push_back(token); };
  auto scheduler = Scheduler::create(*ctx, params);
  ASSERT_TRUE(scheduler) << scheduler.error().message;
  SamplingParams greedy;
  greedy.temperature = 0;
  for (int r = 0; r < 4; ++r) {  // one more than the slots: the last waits for a free one
    std::vector<int32_t> prompt;
    for (int k = 0; k < 5 + r; ++k) prompt.push_back((r * 53 + k * 17 + 3) % 512);
    auto id = scheduler->submit({.prompt = prompt, .max_new_tokens = uint32_t(6 + r), .sampling = greedy});
    ASSERT_TRUE(id) << id.error().message;
  }
  auto results = scheduler->run();
  ASSERT_TRUE(results) << results.error().message;
  ASSERT_EQ(results->size(), 4u);
  ASSERT_EQ(seen.size(), 4u);
  for (const GenerationResult& r : *results) {
    EXPECT_EQ(r.tokens.size(), 6u + r.id);
    EXPECT_EQ(seen[r.id], r.tokens) << "request " << r.id;
  }
}

}  // namespace
}  // namespace infertune
