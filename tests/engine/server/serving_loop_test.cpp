// ServingLoop (engine/server/serving_loop.h) on the llama fixture: greedy jobs submitted from several threads
// get the tokens each prompt gets decoded alone; a cancelled job finishes as cancelled and its KV cells are
// freed; a full queue and a draining loop refuse; jobs that come together to an idle loop have their prompts read
// in one step; log-probabilities are the log-softmax of the logits.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "server_harness.h"

namespace infertune {
namespace {

using namespace std::chrono_literals;

std::vector<int32_t> prompt_of(size_t r, size_t n, uint32_t vocab) {
  std::vector<int32_t> p;
  for (size_t k = 0; k < n; ++k) p.push_back(static_cast<int32_t>((r * 97 + k * 31 + 7) % vocab));
  return p;
}

ServeJob greedy_job(std::vector<int32_t> prompt, uint32_t max_tokens) {
  ServeJob job;
  job.prompt = std::move(prompt);
  job.max_tokens = max_tokens;
  job.sampling.temperature = 0;
  return job;
}

// Every token of a channel until it finishes.
std::pair<std::vector<int32_t>, RequestChannel::Update> drain(RequestChannel& channel) {
  std::vector<int32_t> tokens;
  for (;;) {
    RequestChannel::Update u = channel.wait(1000ms);
    for (const GeneratedToken& t : u.tokens) tokens.push_back(t.token);
    if (u.finished) return {tokens, u};
  }
}

TEST(ServingLoop, ConcurrentGreedyJobsGetTheirTokensDecodedAlone) {
  test::ServerHarness h({.n_parallel = 2, .start_http = false});
  const uint32_t vocab = h.model().config().n_vocab;
  std::vector<std::thread> clients;
  std::vector<std::vector<int32_t>> got(5);
  for (size_t r = 0; r < got.size(); ++r) {
    clients.emplace_back([&, r] {
      auto submitted = h.loop().submit(greedy_job(prompt_of(r, 6 + 9 * r, vocab), 10));
      ASSERT_TRUE(submitted.channel);
      auto [tokens, end] = drain(*submitted.channel);
      EXPECT_EQ(end.reason, FinishReason::length);
      got[r] = tokens;
    });
  }
  for (std::thread& t : clients) t.join();
  for (size_t r = 0; r < got.size(); ++r) {
    EXPECT_EQ(got[r], test::greedy_alone(h.model(), prompt_of(r, 6 + 9 * r, vocab), 10)) << "job " << r;
  }
}

// Every generated token of a channel, with its times, until it finishes.
std::vector<GeneratedToken> drain_tokens(RequestChannel& channel) {
  std::vector<GeneratedToken> tokens;
  for (;;) {
    RequestChannel::Update u = channel.wait(1000ms);
    for (GeneratedToken& t : u.tokens) tokens.push_back(std::move(t));
    if (u.finished) return tokens;
  }
}

// One slot: the second job waits for the first to finish, and its prompt time starts when it gets the slot, not
// when it arrived (llama-server's prompt_ms leaves the wait out). An order of events, not a timing.
TEST(ServingLoop, AFirstTokenSaysItsSlotAndWhenItsPromptStarted) {
  test::ServerHarness h({.n_parallel = 1, .start_http = false});
  const uint32_t vocab = h.model().config().n_vocab;
  const auto arrival = std::chrono::steady_clock::now();
  auto first = h.loop().submit(greedy_job(prompt_of(1, 8, vocab), 24));
  auto second = h.loop().submit(greedy_job(prompt_of(2, 8, vocab), 2));
  ASSERT_TRUE(first.channel && second.channel);
  const std::vector<GeneratedToken> a = drain_tokens(*first.channel);
  const std::vector<GeneratedToken> b = drain_tokens(*second.channel);
  ASSERT_EQ(a.size(), 24u);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(a.front().slot, 0);
  EXPECT_EQ(b.front().slot, 0);
  EXPECT_EQ(a[1].slot, -1) << "only a first token says its slot";
  EXPECT_GE(a.front().prompt_started, arrival);
  EXPECT_LE(a.front().prompt_started, a.front().at);
  EXPECT_GT(b.front().prompt_started, a.back().at) << "the second job's prompt time counts its wait for the slot";
  EXPECT_LE(b.front().prompt_started, b.front().at);
}

TEST(ServingLoop, ACancelledJobFreesItsCells) {
  // Long enough that it is still running when the cancellation arrives, even on a busy machine that leaves this
  // thread waiting: the fixture makes ~10k tokens/s, so 16000 tokens take over a second, and the end token does
  // not stop it (greedy decoding of this prompt samples it after about 15 tokens).
  test::ServerHarness h({.n_parallel = 2, .start_http = false, .n_ctx = 16384});
  ServeJob job = greedy_job(prompt_of(1, 20, h.model().config().n_vocab), 16000);
  job.ignore_eos = true;
  auto submitted = h.loop().submit(std::move(job));
  ASSERT_TRUE(submitted.channel);
  size_t seen = 0;
  while (seen < 3) seen += submitted.channel->wait(1000ms).tokens.size();
  h.loop().cancel(submitted.channel);
  auto [rest, end] = drain(*submitted.channel);
  EXPECT_EQ(end.reason, FinishReason::cancelled);
  ASSERT_TRUE(h.loop().wait_idle(std::chrono::steady_clock::now() + 5s));
  EXPECT_EQ(h.context().kv_cache().n_used(), 0u);
  EXPECT_EQ(h.metrics().gauges().busy_slots, 0u);
}

TEST(ServingLoop, AFullQueueAndADrainingLoopRefuse) {
  test::ServerHarness h({.n_parallel = 1, .max_waiting = 1, .start_http = false});
  const uint32_t vocab = h.model().config().n_vocab;
  auto a = h.loop().submit(greedy_job(prompt_of(1, 8, vocab), 100));
  auto b = h.loop().submit(greedy_job(prompt_of(2, 8, vocab), 100));
  auto c = h.loop().submit(greedy_job(prompt_of(3, 8, vocab), 100));
  ASSERT_TRUE(a.channel && b.channel);
  EXPECT_EQ(c.refusal, ServingLoop::Refusal::queue_full);
  EXPECT_FALSE(c.channel);
  h.loop().drain();
  EXPECT_EQ(h.loop().submit(greedy_job(prompt_of(4, 8, vocab), 4)).refusal, ServingLoop::Refusal::draining);
  EXPECT_EQ(drain(*a.channel).second.reason, FinishReason::length);  // what was accepted still finishes
  EXPECT_EQ(drain(*b.channel).second.reason, FinishReason::length);
}

TEST(ServingLoop, AJobTheSchedulerRefusesFinishesWithItsError) {
  test::ServerHarness h({.start_http = false});
  auto submitted = h.loop().submit(greedy_job(prompt_of(1, 250, h.model().config().n_vocab), 100));
  ASSERT_TRUE(submitted.channel);
  auto [tokens, end] = drain(*submitted.channel);
  EXPECT_TRUE(tokens.empty());
  EXPECT_EQ(end.reason, FinishReason::error);
  EXPECT_NE(end.error.find("cells"), std::string::npos) << end.error;
}

TEST(ServingLoop, JobsThatComeTogetherToAnIdleLoopAreReadInOneStep) {
  // A gathering window far longer than the gap between the two submissions, so a busy machine cannot split them.
  test::ServerHarness h({.n_parallel = 2, .start_http = false, .gather = std::chrono::milliseconds(400)});
  const uint32_t vocab = h.model().config().n_vocab;
  auto a = h.loop().submit(greedy_job(prompt_of(1, 12, vocab), 1));
  std::this_thread::sleep_for(20ms);
  auto b = h.loop().submit(greedy_job(prompt_of(2, 12, vocab), 1));
  ASSERT_TRUE(a.channel && b.channel);
  EXPECT_EQ(drain(*a.channel).first.size(), 1u);
  EXPECT_EQ(drain(*b.channel).first.size(), 1u);
  // Both prompts, and the one token each samples from its prompt's end, in one batch.
  EXPECT_EQ(h.metrics().batch_steps(), 1u);
}

TEST(TokenLogprobs, AreTheLogSoftmaxWithTheBestTokensFirst) {
  const std::vector<float> logits = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f};
  double sum = 0;
  for (float l : logits) sum += std::exp(l);
  const GeneratedToken t = token_logprobs(4, logits, 3);
  EXPECT_NEAR(t.logprob, 0.5 - std::log(sum), 1e-5);
  ASSERT_EQ(t.top.size(), 3u);
  EXPECT_EQ(t.top[0].token, 1);  // ties: the lower id first
  EXPECT_EQ(t.top[1].token, 3);
  EXPECT_EQ(t.top[2].token, 0);
  EXPECT_NEAR(t.top[2].logprob, 1.0 - std::log(sum), 1e-5);
}

}  // namespace
}  // namespace infertune
