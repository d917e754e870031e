// The GPUs' measured figures: without a GPU a measurement is a problem written into the figures (never an
// error of the probe); with one, both figures are positive. Matching cached figures to the live GPUs follows
// the GPU, not its CUDA index.
#include <gtest/gtest.h>

#include "bench/probe/gpu_peak.h"
#include "kernels/cuda/cuda_devices.h"
#include "probe_sample.h"

namespace infertune {
namespace {

TEST(GpuPeak, NoGpusNoFigures) { EXPECT_TRUE(measure_gpu_peaks({}, GpuPlan{}).empty()); }

TEST(GpuPeak, AGpuThatCannotBeUsedGetsAProblemNotAnError) {
  if (!cuda_devices().empty()) GTEST_SKIP() << "a CUDA GPU is visible";
  const GpuInfo absent{.index = 0, .name = "NVIDIA Nothing", .memory_bytes = 1ull << 30};
  const auto figures = measure_gpu_peaks({absent}, GpuPlan{});
  ASSERT_EQ(figures.size(), 1u);
  EXPECT_EQ(figures[0].name, "NVIDIA Nothing");
  EXPECT_FALSE(figures[0].copy_bandwidth_gbs);
  EXPECT_FALSE(figures[0].f16_gemm_tflops);
  EXPECT_FALSE(figures[0].problem.empty());
  if (!cuda_compiled()) {
    EXPECT_NE(figures[0].problem.find("no CUDA backend"), std::string::npos) << figures[0].problem;
  }
}

TEST(GpuPeak, EveryVisibleGpuMeasuresPositiveFigures) {
  const auto devices = cuda_devices();
  if (devices.empty()) GTEST_SKIP() << "no CUDA GPU visible (or no CUDA backend in this build)";
  std::vector<GpuInfo> gpus;
  for (const CudaDevice& d : devices) {
    gpus.push_back({.index = d.index, .name = d.name, .memory_bytes = d.memory_bytes, .pci_bus_id = d.pci_bus_id});
  }
  // Small sizes: this checks the plumbing, not the peak.
  const auto figures =
      measure_gpu_peaks(gpus, GpuPlan{.copy_bytes = 64u << 20, .copy_repeats = 3, .gemm_n = 1024, .gemm_repeats = 3});
  ASSERT_EQ(figures.size(), gpus.size());
  for (const GpuFigures& f : figures) {
    EXPECT_EQ(f.problem, "") << f.name;
    ASSERT_TRUE(f.copy_bandwidth_gbs && f.f16_gemm_tflops) << f.name;
    EXPECT_GT(*f.copy_bandwidth_gbs, 1.0) << f.name;
    EXPECT_GT(*f.f16_gemm_tflops, 0.1) << f.name;
    EXPECT_EQ(f.gemm_n, 1024);
  }
}

TEST(GpuPeak, FiguresFollowTheGpuNotItsIndex) {
  const HostProbe probe = test::sample_probe();
  auto same = figures_of_live_gpus(probe.gpus, probe.host.gpus);
  ASSERT_TRUE(same);
  EXPECT_EQ(*same, probe.gpus);

  std::vector<GpuInfo> swapped = {probe.host.gpus[1], probe.host.gpus[0]};
  swapped[0].index = 0;
  swapped[1].index = 1;
  auto moved = figures_of_live_gpus(probe.gpus, swapped);
  ASSERT_TRUE(moved);
  ASSERT_EQ(moved->size(), 2u);
  EXPECT_EQ((*moved)[0].name, "NVIDIA A10");
  EXPECT_EQ((*moved)[0].index, 0);
  EXPECT_EQ((*moved)[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*moved)[1].index, 1);

  std::vector<GpuInfo> other_slot = probe.host.gpus;
  other_slot[1].pci_bus_id = "00000000:5E:00.0";  // another A10 than the one measured
  EXPECT_FALSE(figures_of_live_gpus(probe.gpus, other_slot));
  EXPECT_TRUE(figures_of_live_gpus(probe.gpus, {}));  // no live GPU needs nothing
}

}  // namespace
}  // namespace infertune
