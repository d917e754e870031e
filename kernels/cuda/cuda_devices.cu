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
    char bus_id[32] = {};
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, i) != cudaSuccess) bus_id[0] = '\0';
    devices.push_back({i, prop.name, prop.major, prop.minor, prop.totalGlobalMem, bus_id});
  }
  return devices;
}

}  // namespace infertune
