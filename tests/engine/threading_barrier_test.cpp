// SpinBarrier with plain std::threads: 10000 rounds of reuse with poll 0 (futex every time) and 100 (spin
// only; 2 threads, so that a 2-CPU machine can run both spinners), checking after each round that every thread's write
// of that round is visible and none of the next round's is; and the sleepers protocol of WaitWord on its own.
#include "engine/threading/barrier.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace infertune {
namespace {

void rounds(int poll, unsigned n_threads) {
  constexpr int kRounds = 10000;
  SpinBarrier barrier;
  const SpinPolicy policy(poll);
  std::vector<int> slots(n_threads, 0);  // plain ints: the barrier alone orders them (TSan checks it)
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < n_threads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 1; round <= kRounds; ++round) {
        slots[t] = round;
        barrier.arrive_and_wait(n_threads, policy);
        for (unsigned other = 0; other < n_threads; ++other) {
          if (slots[other] != round) mismatches++;
        }
        barrier.arrive_and_wait(n_threads, policy);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(ThreadingBarrier, TenThousandRoundsPoll0) { rounds(0, 3); }
TEST(ThreadingBarrier, TenThousandRoundsPoll100) { rounds(100, 2); }
TEST(ThreadingBarrier, TenThousandRoundsPoll50) { rounds(50, 2); }

TEST(ThreadingBarrier, WaitWordWakesASleeper) {
  WaitWord word;
  const SpinPolicy sleep_at_once(0);
  uint32_t seen = 0;
  std::thread waiter([&] { seen = word.wait_while_equal(0, sleep_at_once); });
  // Give the waiter time to go to sleep, so the futex path is the one exercised.
  while (word.sleepers.load() == 0) std::this_thread::yield();
  word.value.store(7, std::memory_order_seq_cst);
  word.wake_all();
  waiter.join();
  EXPECT_EQ(seen, 7u);
  EXPECT_EQ(word.sleepers.load(), 0u);
}

TEST(ThreadingBarrier, SpinPolicyBudget) {
  EXPECT_EQ(SpinPolicy(0).budget().count(), 0);
  EXPECT_FALSE(SpinPolicy(0).spins_forever());
  EXPECT_EQ(SpinPolicy(50).budget(), std::chrono::microseconds(1000));
  EXPECT_TRUE(SpinPolicy(100).spins_forever());
  EXPECT_TRUE(SpinPolicy(250).spins_forever());  // clamped
}

}  // namespace
}  // namespace infertune
