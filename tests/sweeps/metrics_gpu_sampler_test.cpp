// The GPU sampler with injected readings (no GPU needed): the mean busy %, peak memory and mean memory clock
// of what the poller saw, the last reading at stop(), nothing at all when no reading answers (a host without
// NVML), and the samples a trial records from a summary.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels/cuda/nvml.h"
#include "sweeps/metrics/gpu_sampler.h"
#include "sweeps/store/metric_names.h"
#include "sweeps/trial/trial_workload.h"

namespace infertune {
namespace {

using namespace std::chrono_literals;

nvml::GpuSample reading(double busy, uint64_t used, uint32_t memory_clock) {
  return {.busy_percent = busy,
          .memory_used_bytes = used,
          .memory_total_bytes = 80ull << 30,
          .memory_clock_mhz = memory_clock,
          .sm_clock_mhz = 1980};
}

TEST(GpuSampler, FixedReadingsGiveThemBack) {
  GpuSampler sampler([] { return std::optional(reading(75, 5ull << 30, 2619)); }, 1ms);
  sampler.start();
  std::this_thread::sleep_for(20ms);
  const auto usage = sampler.stop();
  ASSERT_TRUE(usage);
  EXPECT_GE(usage->samples, 2);  // polls, then the last reading at stop()
  EXPECT_DOUBLE_EQ(usage->mean_busy_percent, 75);
  EXPECT_EQ(usage->peak_memory_used_bytes, 5ull << 30);
  EXPECT_DOUBLE_EQ(usage->mean_memory_clock_mhz, 2619);
}

// Readings that change: the summary is the mean and the maximum of exactly the readings handed out.
TEST(GpuSampler, MeanAndPeakOfChangingReadings) {
  std::mutex mutex;
  std::vector<nvml::GpuSample> handed_out;
  GpuSampler sampler(
      [&] {
        std::lock_guard lock(mutex);
        const auto i = handed_out.size();
        handed_out.push_back(reading(double(i % 5) * 20, (1ull << 30) * (1 + i % 7), uint32_t(1000 + 100 * (i % 3))));
        return std::optional(handed_out.back());
      },
      1ms);
  sampler.start();
  std::this_thread::sleep_for(30ms);
  const auto usage = sampler.stop();
  ASSERT_TRUE(usage);
  std::lock_guard lock(mutex);
  ASSERT_EQ(usage->samples, int(handed_out.size()));
  double busy = 0, clock = 0;
  uint64_t peak = 0;
  for (const auto& s : handed_out) {
    busy += s.busy_percent;
    clock += s.memory_clock_mhz;
    peak = std::max(peak, s.memory_used_bytes);
  }
  EXPECT_NEAR(usage->mean_busy_percent, busy / handed_out.size(), 1e-9);
  EXPECT_NEAR(usage->mean_memory_clock_mhz, clock / handed_out.size(), 1e-9);
  EXPECT_EQ(usage->peak_memory_used_bytes, peak);
}

// A run shorter than the poll interval still gets its reading from stop(), and stop() does not wait for the
// interval to pass.
TEST(GpuSampler, ShortRunGetsTheReadingAtStopWithoutWaiting) {
  std::atomic<int> calls{0};
  GpuSampler sampler(
      [&] {
        ++calls;
        return std::optional(reading(40, 1 << 20, 0));
      },
      10s);
  const auto begin = std::chrono::steady_clock::now();
  sampler.start();
  const auto usage = sampler.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 2s);
  ASSERT_TRUE(usage);
  EXPECT_EQ(usage->samples, 1);
  EXPECT_EQ(calls.load(), 1);
  EXPECT_DOUBLE_EQ(usage->mean_busy_percent, 40);
  EXPECT_DOUBLE_EQ(usage->mean_memory_clock_mhz, 0);  // the board reported no clock
}

TEST(GpuSampler, ClocksOfZeroAreLeftOutOfTheMean) {
  std::atomic<int> calls{0};
  GpuSampler sampler([&] { return std::optional(reading(10, 1, ++calls % 2 ? 0 : 1500)); }, 1ms);
  sampler.start();
  std::this_thread::sleep_for(20ms);
  const auto usage = sampler.stop();
  ASSERT_TRUE(usage);
  ASSERT_GE(usage->samples, 2);
  EXPECT_DOUBLE_EQ(usage->mean_memory_clock_mhz, 1500);
}

TEST(GpuSampler, NoReadingsMeanNothingToRecord) {
  GpuSampler sampler([] { return std::optional<nvml::GpuSample>(); }, 1ms);
  sampler.start();
  std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(sampler.stop());
}

TEST(GpuSampler, StopWithoutStartAndRestartEachSummarizeTheirOwnInterval) {
  std::atomic<double> busy{10};
  GpuSampler sampler([&] { return std::optional(reading(busy.load(), 1, 1000)); }, 1ms);
  EXPECT_FALSE(sampler.stop());
  sampler.start();
  std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(sampler.stop());
  EXPECT_FALSE(sampler.stop());  // stopped already
  busy = 90;
  sampler.start();
  std::this_thread::sleep_for(5ms);
  const auto second = sampler.stop();
  ASSERT_TRUE(second);
  EXPECT_DOUBLE_EQ(second->mean_busy_percent, 90);
}

TEST(GpuSampler, DestroyingARunningSamplerStopsIt) {
  std::atomic<int> calls{0};
  {
    GpuSampler sampler(
        [&] {
          ++calls;
          return std::optional(reading(1, 1, 1));
        },
        1ms);
    sampler.start();
    std::this_thread::sleep_for(5ms);
  }
  const int after = calls.load();
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(calls.load(), after);
}

// On this host's NVML: without it (no driver) the sampler has nothing and says nothing; with it, device 0
// answers with plausible values.
TEST(GpuSampler, RealDeviceWithOrWithoutNvml) {
  GpuSampler sampler(GpuSampler::device_readings(0));
  sampler.start();
  std::this_thread::sleep_for(60ms);
  const auto usage = sampler.stop();
  if (!nvml::nvml_available()) {
    EXPECT_FALSE(usage);
    EXPECT_FALSE(nvml::nvml_unavailable_reason().empty());
    return;
  }
  if (!usage) GTEST_SKIP() << "NVML is loaded but does not know CUDA device 0";
  EXPECT_GE(usage->mean_busy_percent, 0);
  EXPECT_LE(usage->mean_busy_percent, 100);
  EXPECT_GT(usage->peak_memory_used_bytes, 0u);
}

TEST(GpuUsageSamples, OneOfEachMetricAndNoClockWhenUnknown) {
  std::vector<Sample> samples;
  SampleSink sink(samples, 3, false);
  add_gpu_usage(
      sink,
      {.samples = 4, .mean_busy_percent = 62.5, .peak_memory_used_bytes = 7ull << 30, .mean_memory_clock_mhz = 2619});
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].metric, metric::kGpuBusyPercent);
  EXPECT_EQ(samples[0].value, 62.5);
  EXPECT_EQ(samples[1].metric, metric::kGpuVramPeakBytes);
  EXPECT_EQ(samples[1].value, double(7ull << 30));
  EXPECT_EQ(samples[2].metric, metric::kGpuMemoryClockMhz);
  EXPECT_EQ(samples[2].value, 2619);
  for (const Sample& s : samples) EXPECT_EQ(s.repetition, 3);

  samples.clear();
  add_gpu_usage(sink, {.samples = 1, .mean_busy_percent = 0, .peak_memory_used_bytes = 1, .mean_memory_clock_mhz = 0});
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[1].metric, metric::kGpuVramPeakBytes);
}

}  // namespace
}  // namespace infertune
