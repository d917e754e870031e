#include "bench/probe/compute_peak.h"

#include <algorithm>
#include <cstdint>
#include <functional>

#include "bench/probe/compute_kernels.h"
#include "bench/probe/pinned_threads.h"

namespace infertune {
namespace {

// Where the loops' answers go, so that no compiler may decide they are unused (written by the calling
// thread only, after the measurement threads have joined).
volatile double g_result_sink = 0;

// Values that keep every loop in range: v = v * a + b converges to b / (1 - a) = 1 without denormals, and
// 2 * ua * |sb| fits the AVX2 dot's s16 pairs.
constexpr float kFmaA = 0.999f, kFmaB = 0.001f;
constexpr uint8_t kDotA = 3;
constexpr int8_t kDotB = -5;

using StepsFn = std::function<double(uint64_t steps)>;

// Steps for one window: double a short single-core run until it is long enough to time, then scale.
Result<uint64_t> calibrate_steps(int cpu, const StepsFn& run, double window_seconds) {
  uint64_t steps = 1024;
  for (int attempt = 0; attempt < 30; ++attempt) {
    double result = 0;
    auto seconds = PinnedThreads({cpu}).run([](unsigned) {}, [&](unsigned, unsigned) { result = run(steps); }, 1);
    if (!seconds) return seconds.error();
    g_result_sink = result;
    const double s = seconds->front();
    if (s >= window_seconds / 8) return std::max<uint64_t>(1, static_cast<uint64_t>(steps * (window_seconds / s)));
    steps *= 2;
  }
  return steps;
}

// ops_per_step x steps per repetition and thread, with one thread per cpu.
Result<Rate> measure_rate(const std::vector<int>& cpus, const StepsFn& run, uint64_t steps, double ops_per_step,
                          unsigned reps) {
  std::vector<double> results(cpus.size(), 0.0);
  auto seconds = PinnedThreads(cpus).run([](unsigned) {}, [&](unsigned t, unsigned) { results[t] = run(steps); }, reps);
  if (!seconds) return seconds.error();
  for (double r : results) g_result_sink = g_result_sink + r;
  const double ops = ops_per_step * static_cast<double>(steps) * static_cast<double>(cpus.size());
  return summarize_rate(ops / 1e9, *seconds, static_cast<unsigned>(cpus.size()));
}

struct OneAndAll {
  Rate one, all;
};

Result<OneAndAll> measure_one_and_all(const std::vector<int>& core_cpus, const StepsFn& run, double ops_per_step,
                                      const ComputePlan& plan) {
  auto steps = calibrate_steps(core_cpus.front(), run, plan.window_seconds);
  if (!steps) return steps.error();
  auto one = measure_rate({core_cpus.front()}, run, *steps, ops_per_step, plan.repetitions);
  if (!one) return one.error();
  auto all = measure_rate(core_cpus, run, *steps, ops_per_step, plan.repetitions);
  if (!all) return all.error();
  return OneAndAll{*one, *all};
}

}  // namespace

Result<ComputeFigures> measure_compute_peak(const std::vector<int>& core_cpus, const ComputePlan& plan) {
  if (core_cpus.empty()) return fail("no cores to measure compute on");
  ComputeFigures out;

  const F32FmaKernel fma = available_f32_fma_kernels().front();
  out.f32_isa = std::string(fma.isa);
  auto f32 = measure_one_and_all(
      core_cpus, [&](uint64_t steps) { return fma.run(steps, kFmaA, kFmaB); }, fma.flops_per_step(), plan);
  if (!f32) return f32.error();
  out.f32_one_core = f32->one;
  out.f32_all_cores = f32->all;

  const Int8DotKernel dot = available_int8_dot_kernels().front();
  out.int8_isa = std::string(dot.isa);
  auto int8 = measure_one_and_all(
      core_cpus, [&](uint64_t steps) { return dot.run(steps, kDotA, kDotB); }, dot.ops_per_step(), plan);
  if (!int8) return int8.error();
  out.int8_one_core = int8->one;
  out.int8_all_cores = int8->all;
  return out;
}

}  // namespace infertune
