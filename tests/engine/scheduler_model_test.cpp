// The Scheduler on a real model (the llama fixture): requests sharing a system prompt run through 2-3
// slots with a context small enough to force preemption; at temperature 0 every request's tokens are
// exactly its greedy tokens decoded alone in a fresh context.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "engine/context/context.h"
#include "engine/model/model.h"
#include "engine/scheduler/scheduler.h"
#include "test_support.h"

namespace infertune {
namespace {

std::vector<int32_t> greedy_alone(const Model& model, std::span<const int32_t> prompt, uint32_t n_new) {
  auto ctx = Context::create(model, {.n_ctx = 256, .n_threads = 2});
  EXPECT_TRUE(ctx.ok()) << ctx.error().message;
  std::vector<int32_t> out;
  auto logits = ctx->decode(prompt);
  for (uint32_t i = 0; i < n_new; ++i) {
    EXPECT_TRUE(logits.ok()) << logits.error().message;
    if (!logits) return out;
    const auto row = *logits;
    const int32_t t = static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
    out.push_back(t);
    if (i + 1 < n_new) logits = ctx->decode({t});
  }
  return out;
}

class SchedulerModelTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    auto loaded = Model::load(test::fixture_path(std::string("models/") + GetParam() + ".gguf").string());
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    model_ = std::make_unique<Model>(std::move(*loaded));
  }

  // n requests: a shared system prompt on most of them, then a few tokens of their own.
  std::vector<std::vector<int32_t>> prompts(size_t n) const {
    const int32_t vocab = static_cast<int32_t>(model_->config().n_vocab);
    std::vector<int32_t> sys;
    for (int32_t i = 0; i < 14; ++i) sys.push_back((i * 37 + 11) % vocab);
    std::vector<std::vector<int32_t>> out;
    for (size_t r = 0; r < n; ++r) {
      std::vector<int32_t> p = r % 3 == 2 ? std::vector<int32_t>{} : sys;
      for (size_t k = 0; k < 3 + r % 4; ++k) p.push_back(static_cast<int32_t>((r * 101 + k * 13 + 5) % vocab));
      out.push_back(std::move(p));
    }
    return out;
  }

  std::unique_ptr<Model> model_;
};

TEST_P(SchedulerModelTest, GreedyOutputsEqualAloneUnderPreemption) {
  const uint32_t n_new = 12;
  const auto ps = prompts(6);
  std::vector<std::vector<int32_t>> want;
  for (const auto& p : ps) want.push_back(greedy_alone(*model_, p, n_new));
  for (uint32_t n_parallel : {2u, 3u}) {
    SCOPED_TRACE(n_parallel);
    // 40 cells: two requests of up to 20 prompt tokens (14 shared) growing by 12 each cannot both stay.
    auto ctx =
        Context::create(*model_, {.n_ctx = 40, .n_threads = 2, .n_batch = 16, .n_ubatch = 8, .n_seq_max = n_parallel});
    ASSERT_TRUE(ctx.ok()) << ctx.error().message;
    auto sched = Scheduler::create(*ctx, {.n_parallel = n_parallel, .stop_at_eos = false});
    ASSERT_TRUE(sched.ok()) << sched.error().message;
    for (const auto& p : ps) {
      auto id = sched->submit({.prompt = p, .max_new_tokens = n_new, .sampling = {.temperature = 0.0f}});
      ASSERT_TRUE(id.ok()) << id.error().message;
    }
    auto results = sched->run();
    ASSERT_TRUE(results.ok()) << results.error().message;
    ASSERT_EQ(results->size(), ps.size());
    for (size_t r = 0; r < ps.size(); ++r) {
      EXPECT_EQ((*results)[r].id, r);
      EXPECT_EQ((*results)[r].tokens, want[r]) << "request " << r;
    }
    const SchedulerStats& st = sched->stats();
    EXPECT_GT(st.reused_tokens, 0u) << "the system prompt was never reused";
    EXPECT_GT(st.preemptions, 0u) << "the cache never ran out";
    EXPECT_GT(st.decode_tokens, 0u);
    std::printf("np=%u: %llu steps, %llu decode + %llu prompt tokens, %llu reused, %llu preemptions, %llu evictions\n",
                n_parallel, (unsigned long long)st.steps, (unsigned long long)st.decode_tokens,
                (unsigned long long)st.prompt_tokens, (unsigned long long)st.reused_tokens,
                (unsigned long long)st.preemptions, (unsigned long long)st.evictions);
  }
}

TEST_P(SchedulerModelTest, RejectsWhatCannotRun) {
  auto ctx = Context::create(*model_, {.n_ctx = 32, .n_threads = 1, .n_batch = 8, .n_seq_max = 2});
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  EXPECT_FALSE(Scheduler::create(*ctx, {.n_parallel = 3}).ok());
  auto sched = Scheduler::create(*ctx, {.n_parallel = 2});
  ASSERT_TRUE(sched.ok()) << sched.error().message;
  EXPECT_FALSE(sched->submit({.prompt = {static_cast<int32_t>(model_->config().n_vocab)}, .max_new_tokens = 2}).ok());
  EXPECT_FALSE(sched->submit({.prompt = std::vector<int32_t>(30, 1), .max_new_tokens = 3}).ok());
  EXPECT_FALSE(sched->submit({.prompt = {1}, .max_new_tokens = 2, .sampling = {.top_p = 2.0f}}).ok());
  auto ok = sched->submit({.prompt = {1, 2}, .max_new_tokens = 2, .sampling = {.temperature = 0.0f}});
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  auto results = sched->run();
  ASSERT_TRUE(results.ok()) << results.error().message;
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ(results->front().tokens.size(), 2u);
}

// The equality needs kernels whose per-token results do not depend on how many tokens share a batch (a
// preempted request recomputes its history in one batch): the f32 kernels, and since the one-token and
// the tiled quantized matmuls do the same arithmetic per (row, token), the quantized ones too.
INSTANTIATE_TEST_SUITE_P(Fixtures, SchedulerModelTest,
                         ::testing::Values("fixture-llama-f32", "fixture-llama-Q4_0", "fixture-llama-Q8_0"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace infertune
