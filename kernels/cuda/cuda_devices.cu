// Device discovery through the CUDA runtime. Without a driver or GPU the runtime reports an error,
// which means "no devices" here.
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_devices.h"

namespace infertune {

bool cuda_compiled() { return true; }

std::vector<CudaDevice> cuda_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return {};
  std::vector<CudaDevice> devices;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    devices.push_back({i, prop.name, prop.major, prop.minor, prop.totalGlobalMem});
  }
  return devices;
}

}  // namespace infertune
