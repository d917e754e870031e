// The probe's measurement kernels compute what they claim, for every variant this CPU runs (their answers
// are checked, not only timed), and the measurement drivers run them on the threads they say.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <cmath>
#include <mutex>
#include <numeric>
#include <set>

#include "bench/probe/compute_kernels.h"
#include "bench/probe/compute_peak.h"
#include "bench/probe/memory_bandwidth.h"
#include "bench/probe/pinned_threads.h"
#include "bench/probe/rate.h"
#include "bench/probe/stream_kernels.h"
#include "kernels/cpu_features.h"
#include "probe_sample.h"

namespace infertune {
namespace {

std::vector<uint64_t> pseudo_random_words(size_t n) {
  std::vector<uint64_t> words(n);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (auto& w : words) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    w = x;
  }
  return words;
}

TEST(ReadSumKernels, EveryVariantSumsModulo2To64) {
  const auto kernels = available_read_sum_kernels();
  ASSERT_FALSE(kernels.empty());
  EXPECT_EQ(kernels.back().isa, "scalar");
  const auto words = pseudo_random_words(5000);
  for (const auto& kernel : kernels) {
    // Lengths around every unroll width (4, 16, 32 words) and starts off any vector alignment.
    for (size_t start : {0, 1, 3}) {
      for (size_t n : {0, 1, 3, 4, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 1000, 4099}) {
        const uint64_t expected = std::accumulate(words.begin() + start, words.begin() + start + n, uint64_t{0});
        EXPECT_EQ(kernel.sum(words.data() + start, n), expected) << kernel.isa << " start " << start << " n " << n;
      }
    }
  }
}

TEST(ReadSumKernels, WidestVariantMatchesTheCpu) {
  const CpuFeatures& cpu = cpu_features();
  const char* expected = cpu.avx512f ? "avx512f" : cpu.avx2 ? "avx2" : "scalar";
  EXPECT_EQ(available_read_sum_kernels().front().isa, expected);
}

TEST(StreamTriad, ComputesBPlusScalarTimesC) {
  std::vector<double> a(1001, -1), b(1001), c(1001);
  for (size_t i = 0; i < b.size(); ++i) b[i] = double(i), c[i] = 0.5 * double(i) + 1;
  stream_triad(a.data(), b.data(), c.data(), 3.0, a.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i] + 3.0 * c[i]) << i;
}

// The f32 loop's definition (compute_kernels.h) evaluated one lane at a time.
double f32_model(const F32FmaKernel& k, uint64_t steps, float a, float b) {
  double sum = 0;
  for (unsigned chain = 0; chain < k.chains; ++chain) {
    float v = 1.0f + static_cast<float>(chain) / 16.0f;
    for (uint64_t s = 0; s < steps; ++s) {
      if (k.fused) {
        v = std::fma(v, a, b);
      } else {
        volatile float product = v * a;  // rounded on its own, as without FMA
        v = product + b;
      }
    }
    sum += double(v) * k.lanes;
  }
  return sum;
}

TEST(ComputeKernels, EveryF32VariantComputesItsDefinedRecurrence) {
  const auto kernels = available_f32_fma_kernels();
  ASSERT_FALSE(kernels.empty());
  for (const auto& k : kernels) {
    for (uint64_t steps : {0, 1, 7, 1000}) {
      const double got = k.run(steps, 0.999f, 0.001f);
      const double want = f32_model(k, steps, 0.999f, 0.001f);
      EXPECT_NEAR(got, want, 1e-9 * std::abs(want)) << k.isa << " steps " << steps;
    }
    // A recurrence that grows: a wrong step count or a dropped chain shows up at once.
    EXPECT_NEAR(k.run(20, 1.5f, 0.25f), f32_model(k, 20, 1.5f, 0.25f), 1e-6 * f32_model(k, 20, 1.5f, 0.25f)) << k.isa;
    EXPECT_EQ(k.flops_per_step(), 2.0 * k.chains * k.lanes);
  }
}

// The int8 loop's definition: lane of chain k starts at k and adds 4 * ua * sb per step, wrapping in s32.
double int8_model(const Int8DotKernel& k, uint64_t steps, uint8_t ua, int8_t sb) {
  double sum = 0;
  for (unsigned chain = 0; chain < k.chains; ++chain) {
    const uint32_t lane = static_cast<uint32_t>(chain) + static_cast<uint32_t>(steps * 4 * ua * int64_t(sb));
    sum += double(static_cast<int32_t>(lane)) * k.lanes;
  }
  return sum;
}

TEST(ComputeKernels, EveryInt8VariantComputesItsDefinedDotProducts) {
  const auto kernels = available_int8_dot_kernels();
  ASSERT_FALSE(kernels.empty());
  EXPECT_EQ(kernels.back().isa, "scalar");
  const std::pair<uint8_t, int8_t> operands[] = {{3, -5}, {200, 81}, {255, -64}, {1, 1}};
  for (const auto& k : kernels) {
    for (const auto& [ua, sb] : operands) {
      for (uint64_t steps : {0, 1, 5, 999, 3000000}) {  // the last wraps s32 lanes for the larger operands
        EXPECT_EQ(k.run(steps, ua, sb), int8_model(k, steps, ua, sb))
            << k.isa << " ua " << int(ua) << " sb " << int(sb) << " steps " << steps;
      }
    }
  }
}

TEST(ComputeKernels, BestVariantsFollowTheCpuFeatures) {
  const CpuFeatures& cpu = cpu_features();
  const char* int8 = cpu.avx512_vnni ? "avx512-vnni" : cpu.avx_vnni ? "avx-vnni" : cpu.avx2 ? "avx2" : "scalar";
  EXPECT_EQ(available_int8_dot_kernels().front().isa, int8);
  const char* f32 = cpu.avx512f ? "avx512f" : cpu.avx2 && cpu.fma ? "avx2+fma" : "scalar";
  EXPECT_EQ(available_f32_fma_kernels().front().isa, f32);
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

TEST(PinnedThreads, RunsSetupOnceAndEveryRepetitionOnEachPinnedThread) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  std::vector<int> setups(cpus.size(), 0), works(cpus.size(), 0), wrong_cpu(cpus.size(), 0);
  auto seconds = PinnedThreads(cpus).run(
      [&](unsigned t) {
        ++setups[t];
        EXPECT_EQ(works[t], 0);  // setup comes first
      },
      [&](unsigned t, unsigned rep) {
        EXPECT_EQ(works[t], int(rep));
        ++works[t];
        if (sched_getcpu() != cpus[t]) ++wrong_cpu[t];
      },
      4);
  ASSERT_TRUE(seconds) << seconds.error().message;
  EXPECT_EQ(seconds->size(), 4u);
  for (double s : *seconds) EXPECT_GE(s, 0.0);
  for (size_t t = 0; t < cpus.size(); ++t) {
    EXPECT_EQ(setups[t], 1) << t;
    EXPECT_EQ(works[t], 4) << t;
    EXPECT_EQ(wrong_cpu[t], 0) << "thread " << t << " ran off cpu " << cpus[t];
  }
}

TEST(PinnedThreads, RepetitionsRunInLockstep) {
  const std::vector<int> cpus(std::min<size_t>(allowed_cpus().size(), 4) * 2, allowed_cpus().front());
  std::mutex m;
  std::vector<unsigned> order;  // the repetition index of every work call, in the order they happened
  ASSERT_TRUE(PinnedThreads(cpus).run([](unsigned) {},
                                      [&](unsigned, unsigned rep) {
                                        std::lock_guard lock(m);
                                        order.push_back(rep);
                                      },
                                      5));
  ASSERT_EQ(order.size(), 5 * cpus.size());
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));  // no thread starts rep r+1 before all finished r
}

TEST(PinnedThreads, LeavesTheCallersAffinityAlone) {
  const auto before = allowed_cpus();
  ASSERT_TRUE(PinnedThreads({before.front()}).run([](unsigned) {}, [](unsigned, unsigned) {}, 1));
  EXPECT_EQ(allowed_cpus(), before);
}

TEST(Rate, BestIsTheFastestAndMedianTheMiddle) {
  const Rate r = summarize_rate(10.0, {2.0, 1.0, 4.0, 0.0, 5.0}, 3);  // the 0 s repetition is ignored
  EXPECT_EQ(r.threads, 3u);
  EXPECT_EQ(r.repetitions, 4u);
  EXPECT_DOUBLE_EQ(r.best, 10.0);
  EXPECT_DOUBLE_EQ(r.median, 0.5 * (5.0 + 2.5));
  EXPECT_DOUBLE_EQ(summarize_rate(6.0, {1.0, 2.0, 3.0}, 1).median, 3.0);
  EXPECT_EQ(summarize_rate(1.0, {}, 1).repetitions, 0u);
}

TEST(BandwidthBuffer, AtLeastOneGibAndEightTimesTheLastLevelCache) {
  HostInfo h = test::sample_host_info();  // L3: 2 x 105 MiB, 511 GiB RAM
  EXPECT_EQ(bandwidth_buffer_bytes(h), 8 * 2 * (105ull << 20));
  h.caches.pop_back();  // L2 is now the last level: 112 x 2 MiB
  EXPECT_EQ(bandwidth_buffer_bytes(h), 8 * 112 * (2ull << 20));
  h.caches = {{"L1d", 32 << 10, 4}, {"L2", 256 << 10, 4}, {"L3", 8 << 20, 1}};
  EXPECT_EQ(bandwidth_buffer_bytes(h), 1ull << 30);
  h.memory_bytes = 2ull << 30;  // a small host: a quarter of its RAM
  EXPECT_EQ(bandwidth_buffer_bytes(h), 512ull << 20);
  h.memory_bytes = (3ull << 30) + 12345;
  EXPECT_EQ(bandwidth_buffer_bytes(h) % (2ull << 20), 0u);
}

std::vector<int> core_cpus_or_allowed() {
  auto topology = read_host_topology();
  return topology ? topology->core_cpus : allowed_cpus();
}

TEST(MeasureBandwidth, SmallBufferRunsEveryFigureAndChecksItsSums) {
  const auto cpus = core_cpus_or_allowed();
  BandwidthPlan plan;
  plan.buffer_bytes = 16ull << 20;
  plan.read_repetitions = 3;
  plan.triad_repetitions = 2;
  for (size_t numa_nodes : {1, 2}) {  // the shared buffer and the one-core buffer of its own
    auto figures = measure_memory_bandwidth(cpus, numa_nodes, plan);
    ASSERT_TRUE(figures) << figures.error().message;
    EXPECT_EQ(figures->buffer_bytes, plan.buffer_bytes);
    EXPECT_EQ(figures->read_isa, available_read_sum_kernels().front().isa);
    EXPECT_EQ(figures->read_all_cores.threads, cpus.size());
    EXPECT_EQ(figures->read_one_core.threads, 1u);
    EXPECT_EQ(figures->triad_all_cores.threads, cpus.size());
    for (const Rate& r : {figures->read_all_cores, figures->read_one_core, figures->triad_all_cores}) {
      EXPECT_GT(r.best, 0.0);
      EXPECT_GE(r.best, r.median);
    }
  }
}

TEST(MeasureBandwidth, RejectsNoCoresAndAnEmptyBuffer) {
  EXPECT_FALSE(measure_memory_bandwidth({}, 1, BandwidthPlan{1 << 20}));
  EXPECT_FALSE(measure_memory_bandwidth({allowed_cpus().front()}, 1, BandwidthPlan{0}));
}

TEST(MeasureCompute, ShortWindowsGiveEveryFigure) {
  const auto cpus = core_cpus_or_allowed();
  auto figures = measure_compute_peak(cpus, ComputePlan{0.002, 2});
  ASSERT_TRUE(figures) << figures.error().message;
  EXPECT_EQ(figures->f32_isa, available_f32_fma_kernels().front().isa);
  EXPECT_EQ(figures->int8_isa, available_int8_dot_kernels().front().isa);
  EXPECT_EQ(figures->f32_all_cores.threads, cpus.size());
  EXPECT_EQ(figures->int8_one_core.threads, 1u);
  for (const Rate& r :
       {figures->f32_one_core, figures->f32_all_cores, figures->int8_one_core, figures->int8_all_cores}) {
    EXPECT_EQ(r.repetitions, 2u);
    EXPECT_GT(r.best, 0.0);
  }
  EXPECT_FALSE(measure_compute_peak({}, ComputePlan{}));
}

}  // namespace
}  // namespace infertune
