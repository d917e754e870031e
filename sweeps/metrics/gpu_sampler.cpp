#include "sweeps/metrics/gpu_sampler.h"

#include <algorithm>
#include <utility>

namespace infertune {

GpuSampler::GpuSampler(SampleFunction sample, std::chrono::milliseconds interval)
    : sample_(std::move(sample)), interval_(interval) {}

GpuSampler::SampleFunction GpuSampler::device_readings(int cuda_device) {
  return [cuda_device] { return nvml::nvml_sample(cuda_device); };
}

GpuSampler::~GpuSampler() { join(); }

void GpuSampler::start() {
  join();
  std::lock_guard lock(mutex_);
  stopping_ = false;
  totals_ = {};
  thread_ = std::thread([this] { poll(); });
}

std::optional<GpuUsage> GpuSampler::stop() {
  if (!thread_.joinable()) return std::nullopt;  // never started
  join();
  // The last reading, after the work: it covers an interval shorter than the poll.
  if (auto s = sample_()) add(*s);
  std::lock_guard lock(mutex_);
  const Totals& t = totals_;
  if (t.samples == 0) return std::nullopt;
  return GpuUsage{.samples = t.samples,
                  .mean_busy_percent = t.busy_sum / t.samples,
                  .peak_memory_used_bytes = t.peak_used,
                  .mean_memory_clock_mhz = t.clock_samples > 0 ? t.clock_sum / t.clock_samples : 0.0};
}

void GpuSampler::poll() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_for(lock, interval_, [this] { return stopping_; })) return;
    }
    // Outside the lock: a reading takes ~0.1 ms of ioctls, and stop() should not wait behind it.
    if (auto s = sample_()) add(*s);
  }
}

void GpuSampler::add(const nvml::GpuSample& s) {
  std::lock_guard lock(mutex_);
  ++totals_.samples;
  totals_.busy_sum += s.busy_percent;
  totals_.peak_used = std::max(totals_.peak_used, s.memory_used_bytes);
  if (s.memory_clock_mhz > 0) {  // 0: the board does not report its clock
    ++totals_.clock_samples;
    totals_.clock_sum += s.memory_clock_mhz;
  }
}

void GpuSampler::join() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

}  // namespace infertune
