// Per-thread CPU busy share against each thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID, an independent
// source): a thread that spins for 200 ms of CPU shows those 200 ms, a sleeping one shows none, and a thread
// started after start() is counted from zero. The machine is shared, so a spinning thread may get less than
// its wall time: the share is checked against the CPU it really got, not against 1.
#include <gtest/gtest.h>
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "sweeps/metrics/thread_cpu.h"

namespace infertune {
namespace {

using namespace std::chrono_literals;

double own_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Spins until this thread has used `cpu_seconds` of CPU; returns the CPU it used.
double spin_for_cpu(double cpu_seconds) {
  const double begin = own_cpu_seconds();
  volatile uint64_t counter = 0;
  while (own_cpu_seconds() - begin < cpu_seconds) counter = counter + 1;
  return own_cpu_seconds() - begin;
}

void wait_for(const std::atomic<bool>& flag) {
  while (!flag.load()) std::this_thread::sleep_for(1ms);
}

// Waiting sleeps in 1 ms steps: a few microseconds of CPU per wake-up.
constexpr double kWaitingCpuSlack = 0.02;

TEST(MetricsThreadCpu, SpinningThreadShowsItsCpuSleepingThreadShowsNone) {
  std::atomic<bool> go{false}, release{false}, spin_done{false}, sleep_done{false};
  std::atomic<pid_t> spinner{0}, sleeper{0};
  double spinner_cpu = 0;
  std::thread spin_thread([&] {
    spinner.store(current_thread_id());
    wait_for(go);
    spinner_cpu = spin_for_cpu(0.2);
    spin_done.store(true);
    wait_for(release);  // alive at stop(), so the meter can read it
  });
  std::thread sleep_thread([&] {
    sleeper.store(current_thread_id());
    wait_for(go);
    std::this_thread::sleep_for(200ms);
    sleep_done.store(true);
    wait_for(release);
  });
  while (spinner.load() == 0 || sleeper.load() == 0) std::this_thread::sleep_for(1ms);

  ThreadCpuMeter meter;
  meter.start();
  go.store(true);
  wait_for(spin_done);
  wait_for(sleep_done);
  const ThreadCpuUsage usage = meter.stop();
  release.store(true);
  spin_thread.join();
  sleep_thread.join();

  ASSERT_GE(usage.wall_seconds, 0.2);
  const ThreadBusyShare* spin = nullptr;
  const ThreadBusyShare* sleep = nullptr;
  for (const auto& t : usage.threads) {
    if (t.tid == spinner.load()) spin = &t;
    if (t.tid == sleeper.load()) sleep = &t;
  }
  ASSERT_TRUE(spin && sleep) << "a thread alive at stop() is missing";
  EXPECT_GE(spin->cpu_seconds, spinner_cpu - 0.002);
  EXPECT_LE(spin->cpu_seconds, spinner_cpu + kWaitingCpuSlack);
  EXPECT_NEAR(spin->busy_share, spin->cpu_seconds / usage.wall_seconds, 1e-9);
  EXPECT_LT(sleep->cpu_seconds, kWaitingCpuSlack);
  EXPECT_LT(sleep->busy_share, 0.2);
  EXPECT_GT(spin->busy_share, sleep->busy_share);

  ASSERT_TRUE(usage.mean_busy_share);
  EXPECT_LE(*usage.mean_busy_share, spin->busy_share + 1e-9) << "the spinner is the busiest thread";
  const auto pair_mean = usage.mean_busy_share_of({spinner.load(), sleeper.load()});
  ASSERT_TRUE(pair_mean);
  EXPECT_NEAR(*pair_mean, (spin->busy_share + sleep->busy_share) / 2, 1e-12);
  EXPECT_FALSE(usage.mean_busy_share_of({-1}));
  EXPECT_EQ(usage.busy_share_of(spinner.load()), spin->busy_share);
}

TEST(MetricsThreadCpu, ThreadStartedAfterStartIsCountedFromZero) {
  ThreadCpuMeter meter;
  meter.start();
  std::atomic<pid_t> tid{0};
  std::atomic<bool> release{false}, done{false};
  double lifetime_cpu = 0;
  std::thread late([&] {
    tid.store(current_thread_id());
    spin_for_cpu(0.1);
    lifetime_cpu = own_cpu_seconds();  // everything since the thread began
    done.store(true);
    wait_for(release);
  });
  wait_for(done);
  const ThreadCpuUsage usage = meter.stop();
  release.store(true);
  late.join();

  const ThreadBusyShare* share = nullptr;
  for (const auto& t : usage.threads) {
    EXPECT_GE(t.cpu_seconds, 0) << "tid " << t.tid;
    if (t.tid == tid.load()) share = &t;
  }
  ASSERT_TRUE(share);
  EXPECT_GE(share->cpu_seconds, lifetime_cpu - 0.002);
  EXPECT_LE(share->cpu_seconds, lifetime_cpu + kWaitingCpuSlack);
}

}  // namespace
}  // namespace infertune
