// Built when the CUDA backend is not: there are no CUDA devices.
#include "kernels/cuda/cuda_devices.h"

namespace infertune {

bool cuda_compiled() { return false; }
std::vector<CudaDevice> cuda_devices() { return {}; }

}  // namespace infertune
