#pragma once
// GPU utilization over an interval (a trial's repetition): a thread polls NVML (kernels/cuda/nvml.h) every
// ~50 ms between start() and stop() and summarizes the readings: the mean busy %, the peak device memory in
// use and the mean memory clock. NVML's busy % is itself the share of its last sample period (1/6 s to 1 s)
// in which a kernel ran, so the mean of polls is the busy share of the interval, smoothed at its edges.
//
// The first reading is taken one interval after start(), not at it: at start() the GPU reports the idle
// time before the work. stop() takes a last reading, so an interval shorter than the poll still gets one.
// The thread exits at stop(), before the caller's CPU meter reads the process's threads (thread_cpu.h
// counts threads alive at its stop()), so the poller never dilutes the pool's CPU busy share.
//
// Without NVML (no driver) every reading is absent and stop() returns nullopt: nothing to record, no error.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "kernels/cuda/nvml.h"

namespace infertune {

struct GpuUsage {
  int samples = 0;                      // readings that answered
  double mean_busy_percent = 0;         // 0..100
  uint64_t peak_memory_used_bytes = 0;  // device memory in use, every process's
  double mean_memory_clock_mhz = 0;     // over the readings that reported a clock; 0 when none did
};

class GpuSampler {
 public:
  using SampleFunction = std::function<std::optional<nvml::GpuSample>()>;
  static constexpr std::chrono::milliseconds kDefaultInterval{50};

  // `sample` is called on the poller thread (and by stop()); tests inject fixed readings.
  explicit GpuSampler(SampleFunction sample, std::chrono::milliseconds interval = kDefaultInterval);
  // NVML's readings of a CUDA device (nvml_sample), the sample function of a real sampler.
  static SampleFunction device_readings(int cuda_device);

  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;
  ~GpuSampler();  // stops a running poller, discarding its readings

  // Starts polling; a second start() before stop() restarts the summary.
  void start();
  // Stops polling, and summarizes the readings since start(); nullopt when none answered.
  std::optional<GpuUsage> stop();

 private:
  struct Totals {
    int samples = 0;
    double busy_sum = 0;
    uint64_t peak_used = 0;
    int clock_samples = 0;
    double clock_sum = 0;
  };
  void poll();
  void add(const nvml::GpuSample& s);
  void join();

  SampleFunction sample_;
  std::chrono::milliseconds interval_;
  std::thread thread_;
  std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  bool stopping_ = false;
  Totals totals_;
};

}  // namespace infertune
