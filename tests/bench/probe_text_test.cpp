// The probe's text report: each GPU with its measured copy bandwidth and f16 GEMM peak beside NVML's
// theoretical bandwidth, what could not be measured and why, and one line when there is no GPU, the rest of
// the report being the same either way.
#include <gtest/gtest.h>

#include "bench/probe/probe_text.h"
#include "kernels/cuda/cuda_devices.h"
#include "probe_sample.h"

namespace infertune {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ProbeText, EachGpuWithItsFiguresAndNvmlsTheoreticalBandwidth) {
  const std::string text = host_probe_report(test::sample_probe(), false);
  EXPECT_TRUE(has(text, "GPU 0: NVIDIA H100 80GB HBM3 (compute 9.0, 79.6 GiB, PCI 00000000:19:00.0)")) << text;
  EXPECT_TRUE(has(text, "2890.5 GB/s; NVML theoretical 3352.3 GB/s (5120-bit bus, 2619 MHz): 86%")) << text;
  EXPECT_TRUE(has(text, "f16 GEMM (cuBLAS, f32 acc.)     612.2 TFLOP/s (n = 8192)")) << text;
  // The A10: no NVML figures, and its GEMM failed.
  EXPECT_TRUE(has(text, "GPU 1: NVIDIA A10 (compute 8.6")) << text;
  EXPECT_TRUE(has(text, "512.8 GB/s; NVML theoretical: unknown (no NVML)")) << text;
  EXPECT_TRUE(has(text, "       - TFLOP/s")) << text;
  EXPECT_TRUE(has(text, "not measured: f16 GEMM: out of memory")) << text;
  EXPECT_FALSE(has(text, "GPUs: none")) << text;
}

TEST(ProbeText, AGpuWithoutFiguresSaysSo) {
  HostProbe probe = test::sample_probe();
  probe.gpus.pop_back();
  const std::string text = host_probe_report(probe, true);
  const auto a10 = text.find("GPU 1: NVIDIA A10");
  ASSERT_NE(a10, std::string::npos) << text;
  EXPECT_TRUE(has(text.substr(a10), "  not measured\n")) << text;
}

TEST(ProbeText, NoGpuIsOneLineAndTheRestIsUnchanged) {
  HostProbe with = test::sample_probe();
  HostProbe without = with;
  without.host.gpus.clear();
  without.gpus.clear();
  const std::string text = host_probe_report(without, false);
  const std::string line =
      cuda_compiled() ? "\nGPUs: none visible\n" : "\nGPUs: none (this build has no CUDA backend)\n";
  EXPECT_TRUE(has(text, line)) << text;
  EXPECT_FALSE(has(text, "GPU 0")) << text;
  // Everything before the GPU section is the same as with GPUs.
  const std::string full = host_probe_report(with, false);
  const auto cpu_part = full.substr(0, full.find("\nGPU 0: "));
  EXPECT_EQ(text.substr(0, cpu_part.size()), cpu_part);
  EXPECT_TRUE(has(text, "compute peak:")) << text;
  EXPECT_TRUE(has(text, "measured at 2025-06-01T12:00:00Z")) << text;
}

}  // namespace
}  // namespace infertune
