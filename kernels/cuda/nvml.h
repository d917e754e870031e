#pragma once
// What NVIDIA's management library (NVML) says about a GPU: how busy it is and how much memory it uses now
// (sampled while a trial runs), and its memory interface (the theoretical bandwidth the probe compares the
// measured one against). Plain C++ compiled in every build: libnvidia-ml.so.1 comes with the driver, not the
// toolkit, so it is opened with dlopen on first use. Without it (no driver, a CPU-only host, a container
// without the library) every query returns nullopt and nvml_unavailable_reason() says why; nothing here is
// an error at start-up.
//
// Devices are CUDA's indices (what -mg and cuda_devices() use). NVML numbers devices on its own (PCI bus
// order, ignoring CUDA_VISIBLE_DEVICES), so a CUDA index is matched to the NVML device with the same PCI bus
// id (CudaDevice::pci_bus_id); only where that is unknown is the CUDA index taken as NVML's, which holds when
// CUDA_DEVICE_ORDER=PCI_BUS_ID and CUDA_VISIBLE_DEVICES is unset.
#include <cstdint>
#include <optional>
#include <string>

namespace infertune::nvml {

// One reading, now.
struct GpuSample {
  double busy_percent = 0;          // share of NVML's last sample period (1/6 s to 1 s) in which a kernel ran, 0..100
  uint64_t memory_used_bytes = 0;   // device memory in use by every process
  uint64_t memory_total_bytes = 0;  // what the device has
  uint32_t memory_clock_mhz = 0;    // current memory clock
  uint32_t sm_clock_mhz = 0;        // current SM clock
};

// What does not change while the driver runs.
struct GpuStatic {
  std::string name;
  uint32_t max_memory_clock_mhz = 0;
  uint32_t bus_width_bits = 0;
  // 2 (double data rate) x max memory clock x bus width / 8 bits, in GB/s (1e9 bytes per second): what the
  // memory interface can move at most, reads and writes together.
  double theoretical_bandwidth_gbps = 0;
};

// nullopt when NVML is unavailable, the device is unknown to it, or a query fails.
std::optional<GpuSample> nvml_sample(int cuda_device);
// nullopt as above, and when NVML does not report the bus width or the clock (then no bandwidth is known).
std::optional<GpuStatic> nvml_static(int cuda_device);

// True when libnvidia-ml.so.1 was opened and initialised (the first call tries).
bool nvml_available();
// Why NVML cannot be used ("" when it can), e.g. "libnvidia-ml.so.1 not found (no NVIDIA driver)".
std::string nvml_unavailable_reason();

// The formula of GpuStatic::theoretical_bandwidth_gbps.
double theoretical_bandwidth_gbps(uint32_t memory_clock_mhz, uint32_t bus_width_bits);

}  // namespace infertune::nvml
