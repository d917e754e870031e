// ThreadPool: parallel_for runs every task exactly once for many (n_tasks, n_threads) pairs, including
// n_tasks < n_threads and 0; run() hands each thread its index once, thread 0 being the caller; jobs and
// barriers survive 10000 rounds with poll 0 (always futex) and 100 (always spin) without a lost wake-up;
// run_balanced covers every item once in chunks on whole granules; nested and concurrent use are errors, a throwing
// task is an error, and destruction is prompt.
#include "engine/threading/thread_pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>

#include "engine/threading/first_touch.h"
#include "engine/threading/parallel_for.h"
#include "engine/threading/static_split.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<ThreadPool> make_pool(unsigned n_threads, int poll) {
  ThreadPoolConfig config;
  config.n_threads = n_threads;
  config.poll = poll;
  auto pool = ThreadPool::create(config);
  EXPECT_TRUE(pool.ok()) << (pool.ok() ? "" : pool.error().message);
  return pool.ok() ? std::move(pool).value() : nullptr;
}

TEST(ThreadingPool, ParallelForRunsEveryTaskExactlyOnce) {
  auto pool = make_pool(4, 50);
  ASSERT_TRUE(pool);
  for (size_t n_tasks : {0, 1, 2, 3, 4, 5, 7, 16, 63, 100, 1000, 4097}) {
    for (unsigned n_threads = 1; n_threads <= 4; ++n_threads) {
      std::vector<std::atomic<int>> counts(n_tasks);
      std::atomic<unsigned> threads_seen{0};
      std::atomic<bool> bad_thread{false};
      ASSERT_TRUE(pool->parallel_for(n_tasks, n_threads,
                                     [&](size_t task, unsigned thread) {
                                       counts[task].fetch_add(1, std::memory_order_relaxed);
                                       if (thread >= n_threads || thread >= std::max<size_t>(n_tasks, 1))
                                         bad_thread = true;
                                       threads_seen.fetch_or(1u << thread, std::memory_order_relaxed);
                                     })
                      .ok());
      for (size_t t = 0; t < n_tasks; ++t)
        ASSERT_EQ(counts[t].load(), 1) << n_tasks << "/" << n_threads << " task " << t;
      EXPECT_FALSE(bad_thread) << n_tasks << "/" << n_threads;
      if (n_tasks == 0) {
        EXPECT_EQ(threads_seen.load(), 0u);
      }
    }
  }
}

TEST(ThreadingPool, RunGivesEachThreadItsIndexOnceAndTheCallerIsThreadZero) {
  auto pool = make_pool(4, 0);
  ASSERT_TRUE(pool);
  EXPECT_EQ(pool->size(), 4u);
  for (unsigned n = 1; n <= 4; ++n) {
    std::vector<std::atomic<int>> calls(4);
    std::vector<std::thread::id> ids(4);
    std::atomic<bool> wrong_count{false};
    ASSERT_TRUE(pool->run(n,
                          [&](unsigned thread, unsigned n_threads) {
                            if (n_threads != n) wrong_count = true;
                            calls[thread]++;
                            ids[thread] = std::this_thread::get_id();
                          })
                    .ok());
    EXPECT_FALSE(wrong_count);
    for (unsigned t = 0; t < 4; ++t) EXPECT_EQ(calls[t].load(), t < n ? 1 : 0) << n << " threads, thread " << t;
    EXPECT_EQ(ids[0], std::this_thread::get_id());
    std::set<std::thread::id> distinct(ids.begin(), ids.begin() + n);
    EXPECT_EQ(distinct.size(), n);
  }
}

TEST(ThreadingPool, StaticSplitOverRunCoversRowsContiguously) {
  auto pool = make_pool(3, 50);
  ASSERT_TRUE(pool);
  for (size_t rows : {0, 1, 2, 5, 96, 1001}) {
    for (unsigned n = 1; n <= 3; ++n) {
      std::vector<std::atomic<int>> owner(rows);
      for (auto& o : owner) o = -1;
      ASSERT_TRUE(pool->run(n,
                            [&](unsigned thread, unsigned n_threads) {
                              const IndexRange r = split_range(rows, n_threads, thread);
                              for (size_t i = r.begin; i < r.end; ++i) owner[i] = static_cast<int>(thread);
                            })
                      .ok());
      // Owners are non-decreasing (contiguous ranges in thread order) and every row has one.
      for (size_t i = 0; i < rows; ++i) {
        ASSERT_GE(owner[i].load(), 0);
        if (i > 0) {
          ASSERT_GE(owner[i].load(), owner[i - 1].load());
        }
      }
      // parallel_ranges covers them too, with at most n ranges of at least min_chunk rows.
      std::vector<std::atomic<int>> covered(rows);
      std::atomic<int> ranges{0};
      std::atomic<bool> too_small{false};
      ASSERT_TRUE(pool->parallel_ranges(
                          rows, n,
                          [&](size_t begin, size_t end) {
                            ranges++;
                            if (end - begin < std::min<size_t>(rows, 40)) too_small = true;
                            for (size_t i = begin; i < end; ++i) covered[i]++;
                          },
                          40)
                      .ok());
      for (size_t i = 0; i < rows; ++i) ASSERT_EQ(covered[i].load(), 1);
      EXPECT_LE(ranges.load(), static_cast<int>(n));
      EXPECT_FALSE(too_small);
    }
  }
}

TEST(ThreadingPool, BalancedRangesCoverEveryItemOnceInWholeGranules) {
  auto pool = make_pool(3, 50);
  ASSERT_TRUE(pool);
  for (size_t items : {0, 1, 15, 16, 17, 96, 1001, 8192}) {
    for (unsigned n = 1; n <= 3; ++n) {
      for (size_t min_chunk : {1, 40}) {
        const ParallelFor threads(*pool, n);
        std::vector<std::atomic<int>> covered(items);
        std::atomic<bool> misaligned{false}, too_small{false};
        ASSERT_TRUE(threads
                        .run_balanced(
                            items,
                            [&](size_t begin, size_t end) {
                              if (begin % 16 != 0) misaligned = true;
                              // Every chunk but the last holds at least min_chunk items.
                              if (end < items && end - begin < min_chunk) too_small = true;
                              for (size_t i = begin; i < end; ++i) covered[i]++;
                            },
                            min_chunk, 16)
                        .ok());
        for (size_t i = 0; i < items; ++i) ASSERT_EQ(covered[i].load(), 1) << items << " items, item " << i;
        EXPECT_FALSE(misaligned) << items << "/" << n;
        EXPECT_FALSE(too_small) << items << "/" << n;
      }
    }
  }
}

// Spinning needs a CPU per thread (the pool sleeps at once otherwise), so the poll-100 runs use 2 threads.
void many_jobs(int poll, unsigned n_threads) {
  constexpr int kRounds = 10000;
  auto pool = make_pool(n_threads, poll);
  ASSERT_TRUE(pool);
  std::atomic<int> total{0};
  int expected = 0;
  for (int round = 0; round < kRounds; ++round) {
    const unsigned n = 1 + static_cast<unsigned>(round) % n_threads;  // vary the active count too
    expected += static_cast<int>(n);
    ASSERT_TRUE(pool->run(n, [&](unsigned, unsigned) { total.fetch_add(1, std::memory_order_relaxed); }).ok());
  }
  EXPECT_EQ(total.load(), expected);
}

TEST(ThreadingPool, TenThousandJobsPoll0) { many_jobs(0, 3); }
TEST(ThreadingPool, TenThousandJobsPoll100) { many_jobs(100, 2); }

void many_barriers(int poll, unsigned n_threads) {
  constexpr int kRounds = 10000;
  auto pool = make_pool(n_threads, poll);
  ASSERT_TRUE(pool);
  std::atomic<int> sum{0};
  std::atomic<int> mismatches{0};
  ASSERT_TRUE(pool->run([&](unsigned, unsigned n) {
                    for (int round = 0; round < kRounds; ++round) {
                      sum.fetch_add(1, std::memory_order_relaxed);
                      pool->barrier();
                      // Everyone has added for this round and nobody for the next one yet.
                      if (sum.load(std::memory_order_relaxed) != (round + 1) * static_cast<int>(n)) mismatches++;
                      pool->barrier();
                    }
                  })
                  .ok());
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(sum.load(), kRounds * static_cast<int>(n_threads));
}

TEST(ThreadingPool, TenThousandBarriersPoll0) { many_barriers(0, 3); }
TEST(ThreadingPool, TenThousandBarriersPoll100) { many_barriers(100, 2); }

TEST(ThreadingPool, MoreThreadsThanCpusNeverSpin) {
  ThreadPoolConfig config;
  config.n_threads = 3;
  config.poll = 100;
  config.placement.assign(3, WorkerPlacement{CpuSet({0}), std::nullopt});  // no topology: nothing is bound
  auto pool = ThreadPool::create(config);
  ASSERT_TRUE(pool.ok()) << pool.error().message;
  EXPECT_EQ((*pool)->poll(), 0);
  ASSERT_EQ((*pool)->warnings().size(), 1u);
  EXPECT_THAT((*pool)->warnings()[0], HasSubstr("3 threads on 1 CPUs: --poll 100 ignored"));
  std::atomic<int> ran{0};
  EXPECT_TRUE((*pool)->run([&](unsigned, unsigned) { ran++; }).ok());
  EXPECT_EQ(ran.load(), 3);
  config.n_threads = 1;
  config.placement.resize(1);
  auto one = ThreadPool::create(config);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)->poll(), 100);
}

TEST(ThreadingPool, NestedUseIsAnErrorNotADeadlock) {
  auto pool = make_pool(2, 0);
  auto other = make_pool(2, 0);
  ASSERT_TRUE(pool && other);
  std::atomic<int> nested_errors{0};
  std::atomic<int> inner_calls{0};
  ASSERT_TRUE(pool->run([&](unsigned, unsigned) {
                    Status a = pool->run([&](unsigned, unsigned) { inner_calls++; });
                    Status b = pool->parallel_for(4, [&](size_t, unsigned) { inner_calls++; });
                    Status c = other->run([&](unsigned, unsigned) { inner_calls++; });
                    for (const Status* s : {&a, &b, &c}) {
                      if (!s->ok() && s->error().message.find("nested") != std::string::npos) nested_errors++;
                    }
                  })
                  .ok());
  EXPECT_EQ(nested_errors.load(), 6);  // three calls on each of the two threads
  EXPECT_EQ(inner_calls.load(), 0);
  // Both pools still work.
  std::atomic<int> calls{0};
  EXPECT_TRUE(pool->run([&](unsigned, unsigned) { calls++; }).ok());
  EXPECT_TRUE(other->run([&](unsigned, unsigned) { calls++; }).ok());
  EXPECT_EQ(calls.load(), 4);
}

TEST(ThreadingPool, ConcurrentUseFromAnotherThreadIsAnError) {
  auto pool = make_pool(2, 0);
  ASSERT_TRUE(pool);
  std::atomic<bool> job_running{false}, other_done{false};
  std::string other_error;
  std::thread other([&] {
    while (!job_running.load()) std::this_thread::yield();
    Status s = pool->run([](unsigned, unsigned) {});
    other_error = s.ok() ? "accepted" : s.error().message;
    other_done = true;
  });
  ASSERT_TRUE(pool->run([&](unsigned thread, unsigned) {
                    if (thread != 0) return;
                    job_running = true;
                    while (!other_done.load()) std::this_thread::yield();
                  })
                  .ok());
  other.join();
  EXPECT_THAT(other_error, HasSubstr("one job at a time"));
  // Sequential use from another thread is fine.
  std::thread later([&] { EXPECT_TRUE(pool->run([](unsigned, unsigned) {}).ok()); });
  later.join();
}

TEST(ThreadingPool, ThrowingTaskIsReportedAndThePoolSurvives) {
  auto pool = make_pool(3, 0);
  ASSERT_TRUE(pool);
  std::atomic<int> finished{0};
  Status s = pool->run([&](unsigned thread, unsigned) {
    if (thread == 1) throw std::runtime_error("row 7 is bad");
    finished++;
  });
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("row 7 is bad"));
  EXPECT_THAT(s.error().message, HasSubstr("thread 1"));
  EXPECT_EQ(finished.load(), 2);
  Status caller = pool->run([](unsigned thread, unsigned) {
    if (thread == 0) throw 42;
  });
  EXPECT_FALSE(caller.ok());
  EXPECT_TRUE(pool->run([](unsigned, unsigned) {}).ok());  // the error does not stick
}

TEST(ThreadingPool, BadThreadCountsAreErrors) {
  auto pool = make_pool(2, 0);
  ASSERT_TRUE(pool);
  EXPECT_FALSE(pool->run(0, [](unsigned, unsigned) {}).ok());
  EXPECT_THAT(pool->run(3, [](unsigned, unsigned) {}).error().message, HasSubstr("3 threads requested"));
  EXPECT_FALSE(pool->parallel_for(10, 3, [](size_t, unsigned) {}).ok());
  ThreadPoolConfig zero;
  zero.n_threads = 0;
  EXPECT_FALSE(ThreadPool::create(zero).ok());
  ThreadPoolConfig mismatched;
  mismatched.n_threads = 2;
  mismatched.placement.resize(3);
  EXPECT_FALSE(ThreadPool::create(mismatched).ok());
}

TEST(ThreadingPool, SingleThreadPoolRunsOnTheCaller) {
  auto pool = make_pool(1, 50);
  ASSERT_TRUE(pool);
  std::thread::id ran_on;
  int sum = 0;  // no atomics needed: only the caller runs
  ASSERT_TRUE(pool->run([&](unsigned, unsigned n) {
                    ran_on = std::this_thread::get_id();
                    sum += static_cast<int>(n);
                    pool->barrier();  // a one-thread barrier returns at once
                  })
                  .ok());
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(sum, 1);
  ASSERT_TRUE(pool->parallel_for(5, [&](size_t task, unsigned) { sum += static_cast<int>(task); }).ok());
  EXPECT_EQ(sum, 11);
}

TEST(ThreadingPool, DestructionWithIdleWorkersIsPrompt) {
  // Liveness, not speed: a lost wake-up would hang here; the bound is generous.
  for (int poll : {0, 50, 100}) {
    for (bool used : {false, true}) {
      auto pool = make_pool(4, poll);
      ASSERT_TRUE(pool);
      if (used) {
        ASSERT_TRUE(pool->run(2, [](unsigned, unsigned) {}).ok());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // let poll-0 workers fall asleep
      const auto start = std::chrono::steady_clock::now();
      pool.reset();
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << "poll " << poll;
    }
  }
}

TEST(ThreadingPool, FirstTouchZeroesEveryByte) {
  auto pool = make_pool(3, 0);
  ASSERT_TRUE(pool);
  std::vector<unsigned char> buffer(3 * 4096 + 123, 0xAB);
  ASSERT_TRUE(first_touch(*pool, buffer.data(), buffer.size(), 3).ok());
  EXPECT_TRUE(std::all_of(buffer.begin(), buffer.end(), [](unsigned char b) { return b == 0; }));
}

}  // namespace
}  // namespace infertune
