// Hardware counters of the whole process, or, where the kernel forbids them, nullopt with a reason.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <time.h>

#include <cstdint>
#include <thread>

#include "sweeps/metrics/perf_counters.h"

namespace infertune {
namespace {

// 1e7 dependent adds that the compiler cannot fold away (volatile) : at least ~1e7 instructions.
uint64_t add_loop(uint64_t iterations) {
  volatile uint64_t sum = 0;
  for (uint64_t i = 0; i < iterations; ++i) sum = sum + i;
  return sum;
}

void expect_all_missing_with_reason(const PerfCounters& counters, const CounterValues& values) {
  EXPECT_FALSE(values.instructions);
  EXPECT_FALSE(values.cycles);
  EXPECT_FALSE(values.llc_misses);
  EXPECT_FALSE(values.ipc());
  EXPECT_FALSE(counters.available());
  EXPECT_FALSE(counters.unavailable_reason().empty()) << "no counter opened, yet no reason given";
}

TEST(MetricsPerfCounters, CountsALoopOrSaysWhyNot) {
  PerfCounters counters = PerfCounters::open_for_process();
  counters.start();
  add_loop(10'000'000);
  const CounterValues values = counters.stop();
  if (!counters.available()) {
    expect_all_missing_with_reason(counters, values);
    GTEST_SKIP() << "hardware counters unavailable: " << counters.unavailable_reason();
  }
  ASSERT_TRUE(values.instructions) << counters.unavailable_reason();
  ASSERT_TRUE(values.cycles) << counters.unavailable_reason();
  EXPECT_GT(*values.instructions, 1e7);
  EXPECT_GT(*values.cycles, 0u);
  ASSERT_TRUE(values.ipc());
  EXPECT_GT(*values.ipc(), 0.01);
  EXPECT_LT(*values.ipc(), 16.0);
}

TEST(MetricsPerfCounters, CountsThreadsStartedAfterOpening) {
  PerfCounters counters = PerfCounters::open_for_process();
  counters.start();
  std::thread late([] { add_loop(20'000'000); });
  late.join();
  const CounterValues values = counters.stop();
  if (!counters.available()) {
    expect_all_missing_with_reason(counters, values);
    GTEST_SKIP() << "hardware counters unavailable: " << counters.unavailable_reason();
  }
  ASSERT_TRUE(values.instructions);
  EXPECT_GT(*values.instructions, 2e7) << "the thread started after opening was not counted (inherit)";
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The software task clock (ns of CPU, no PMU needed) in every slot: the per-thread events and inherit must
// add up to the process's CPU time (CLOCK_PROCESS_CPUTIME_ID, an independent clock), a thread started
// after opening included.
TEST(MetricsPerfCounters, PerThreadEventsWithInheritCountTheWholeProcess) {
  const PerfEventSpec task_clock{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK};
  std::thread idle_helper_started_before([] { std::this_thread::sleep_for(std::chrono::milliseconds(50)); });
  PerfCounters counters = PerfCounters::open_for_process_with({task_clock, task_clock, task_clock});
  if (!counters.available()) {
    idle_helper_started_before.join();
    EXPECT_FALSE(counters.unavailable_reason().empty());
    GTEST_SKIP() << "perf events unavailable altogether: " << counters.unavailable_reason();
  }
  EXPECT_EQ(counters.unavailable_reason(), "");
  const double cpu_before = process_cpu_seconds();
  counters.start();
  add_loop(20'000'000);
  std::thread late([] { add_loop(20'000'000); });
  late.join();
  const CounterValues values = counters.stop();
  const double cpu_seconds = process_cpu_seconds() - cpu_before;
  idle_helper_started_before.join();

  ASSERT_TRUE(values.cycles && values.instructions && values.llc_misses);
  for (uint64_t ns : {*values.cycles, *values.instructions, *values.llc_misses}) {
    const double counted = static_cast<double>(ns) * 1e-9;
    EXPECT_GT(counted, 0.8 * cpu_seconds) << "a thread's time is missing (the late one: inherit)";
    EXPECT_LT(counted, 1.1 * cpu_seconds + 0.005);
  }
  // A second interval counts only itself.
  counters.start();
  const CounterValues nothing_much = counters.stop();
  ASSERT_TRUE(nothing_much.cycles);
  EXPECT_LT(*nothing_much.cycles, *values.cycles / 10);
}

TEST(MetricsPerfCounters, StopWithoutCountersIsAllMissing) {
  PerfCounters none;  // default-constructed: nothing opened
  none.start();
  const CounterValues values = none.stop();
  EXPECT_FALSE(values.instructions || values.cycles || values.llc_misses);
  EXPECT_FALSE(none.available());
}

TEST(MetricsPerfCounters, IpcNeedsBothCounters) {
  EXPECT_FALSE((CounterValues{100u, std::nullopt, 1u}.ipc()));
  EXPECT_FALSE((CounterValues{100u, 0u, 1u}.ipc()));
  EXPECT_DOUBLE_EQ(*(CounterValues{300u, 200u, std::nullopt}.ipc()), 1.5);
}

}  // namespace
}  // namespace infertune
