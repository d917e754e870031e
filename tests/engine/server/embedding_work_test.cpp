// The serving loop's embedding work: a request is embedded a piece at a time (inputs up to -b tokens together),
// its vectors are those of the inputs embedded alone, in order; a cancelled request is dropped at its next piece;
// a server that stops answers what is left with an error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "engine/server/embedding_work.h"
#include "test_support.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

class EmbeddingWorkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = Model::load(test::fixture_path("models/fixture-llama-Q8_0.gguf").string());
    ASSERT_TRUE(model.ok()) << model.error().message;
    model_ = std::make_unique<Model>(std::move(*model));
    auto ctx =
        Context::create(*model_, {.n_ctx = 32, .n_batch = 32, .n_ubatch = 32, .n_seq_max = 4, .embeddings = true});
    ASSERT_TRUE(ctx.ok()) << ctx.error().message;
    ctx_ = std::make_unique<Context>(std::move(*ctx));
  }

  static std::vector<int32_t> input(size_t n, int32_t seed) {
    std::vector<int32_t> ids(n);
    for (size_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>(1 + (seed * 37 + i * 11) % 200);
    return ids;
  }

  std::unique_ptr<Model> model_;
  std::unique_ptr<Context> ctx_;
};

TEST_F(EmbeddingWorkTest, ARequestIsEmbeddedAPieceAtATime) {
  EmbeddingWork work(*ctx_, Pooling::mean);
  EmbedJob job;
  for (int i = 0; i < 10; ++i) job.inputs.push_back(input(12, i));  // 120 tokens: 4 pieces of -b 32 at most
  auto ticket = std::make_shared<EmbeddingTicket>();
  work.add(job, ticket);
  size_t steps = 0;
  while (!work.idle()) {
    EXPECT_FALSE(ticket->wait(std::chrono::milliseconds(0))) << "answered before its last piece";
    work.step();
    ++steps;
  }
  EXPECT_EQ(steps, 5u) << "two inputs of 12 tokens per piece";
  auto done = ticket->wait(std::chrono::milliseconds(0));
  ASSERT_TRUE(done && done->ok());
  ASSERT_EQ((*done)->size(), job.inputs.size());
  for (size_t i = 0; i < job.inputs.size(); ++i) {
    Embedder alone(*ctx_, {.pooling = Pooling::mean});
    auto want = alone.embed(std::vector<std::vector<int32_t>>{job.inputs[i]});
    ASSERT_TRUE(want.ok());
    const auto got = (**done)[i].row(0);
    for (size_t d = 0; d < got.size(); ++d) ASSERT_NEAR(got[d], (*want)[0].row(0)[d], 1e-5) << "input " << i;
  }
}

TEST_F(EmbeddingWorkTest, ACancelledRequestIsDroppedAndAStoppingServerAnswersTheRest) {
  EmbeddingWork work(*ctx_, Pooling::last);
  auto cancelled = std::make_shared<EmbeddingTicket>();
  auto waiting = std::make_shared<EmbeddingTicket>();
  work.add({.inputs = {input(30, 1), input(30, 2)}}, cancelled);
  work.add({.inputs = {input(5, 3)}}, waiting);
  work.step();  // the first input of the first request
  cancelled->cancel();
  work.step();
  auto dropped = cancelled->wait(std::chrono::milliseconds(0));
  ASSERT_TRUE(dropped);
  ASSERT_FALSE(dropped->ok());
  EXPECT_THAT(dropped->error().message, HasSubstr("cancelled"));
  work.fail_all("the server is stopping");
  auto stopped = waiting->wait(std::chrono::milliseconds(0));
  ASSERT_TRUE(stopped && !stopped->ok());
  EXPECT_THAT(stopped->error().message, HasSubstr("stopping"));
  EXPECT_TRUE(work.idle());
}

}  // namespace
}  // namespace infertune
