// NVML through dlopen: on a host without the driver's library every query is absent and the reason says
// so (no error, no crash); with it, a CUDA device's static figures are plausible. The bandwidth formula is
// checked against published figures.
#include <gtest/gtest.h>

#include "kernels/cuda/cuda_devices.h"
#include "kernels/cuda/nvml.h"

namespace infertune {
namespace {

TEST(Nvml, TheoreticalBandwidthIsDoubleDataRateTimesBusWidth) {
  // H100 SXM (HBM3): NVML reports a 2619 MHz memory clock on a 5120-bit bus: 3.35 TB/s.
  EXPECT_NEAR(nvml::theoretical_bandwidth_gbps(2619, 5120), 3352.32, 1e-6);
  // RTX 4090 (GDDR6X): 10501 MHz, 384 bits: ~1008 GB/s.
  EXPECT_NEAR(nvml::theoretical_bandwidth_gbps(10501, 384), 1008.096, 1e-6);
  EXPECT_EQ(nvml::theoretical_bandwidth_gbps(0, 384), 0.0);
}

TEST(Nvml, AbsentLibraryMeansNoAnswersAndAReason) {
  if (nvml::nvml_available()) GTEST_SKIP() << "NVML is present on this host";
  EXPECT_FALSE(nvml::nvml_unavailable_reason().empty());
  EXPECT_FALSE(nvml::nvml_sample(0));
  EXPECT_FALSE(nvml::nvml_static(0));
  EXPECT_FALSE(nvml::nvml_sample(-1));
}

TEST(Nvml, EveryCudaDeviceHasPlausibleFigures) {
  if (!nvml::nvml_available()) GTEST_SKIP() << "no NVML: " << nvml::nvml_unavailable_reason();
  EXPECT_EQ(nvml::nvml_unavailable_reason(), "");
  const auto devices = cuda_devices();
  if (devices.empty()) GTEST_SKIP() << "NVML is present but no CUDA device is visible (or no CUDA backend)";
  for (const CudaDevice& d : devices) {
    const auto sample = nvml::nvml_sample(d.index);
    ASSERT_TRUE(sample) << d.name;
    EXPECT_LE(sample->busy_percent, 100);
    EXPECT_GT(sample->memory_total_bytes, 0u);
    EXPECT_LE(sample->memory_used_bytes, sample->memory_total_bytes);
    // The runtime's total excludes what the driver reserves; NVML's does not.
    EXPECT_GE(sample->memory_total_bytes, d.memory_bytes) << d.name;
    const auto figures = nvml::nvml_static(d.index);
    ASSERT_TRUE(figures) << d.name;
    EXPECT_GT(figures->bus_width_bits, 0u);
    EXPECT_GT(figures->max_memory_clock_mhz, 0u);
    EXPECT_GT(figures->theoretical_bandwidth_gbps, 50.0);
    EXPECT_FALSE(figures->name.empty());
  }
  EXPECT_FALSE(nvml::nvml_sample(int(devices.size())));  // no such CUDA device
}

}  // namespace
}  // namespace infertune
