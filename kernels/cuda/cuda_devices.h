#pragma once
// What the CUDA backend sees: whether it was compiled in, and the GPUs the driver reports.
#include <string>
#include <vector>

namespace infertune {

struct CudaDevice {
  int index = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  size_t memory_bytes = 0;
  std::string pci_bus_id;  // "0000:65:00.0" (domain:bus:device.function); how NVML finds the same device
};

bool cuda_compiled();
// GPUs visible to the CUDA runtime; empty without a driver or GPU (never an error at start-up).
std::vector<CudaDevice> cuda_devices();

// Why no CUDA GPU can be used ("" when one is visible), in the words every command and test uses.
inline std::string no_cuda_gpu_reason() {
  if (!cuda_compiled()) return "this build has no CUDA backend";
  return cuda_devices().empty() ? "no CUDA GPU is visible" : "";
}

}  // namespace infertune
