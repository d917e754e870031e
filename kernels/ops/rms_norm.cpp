#include "kernels/ops/rms_norm.h"

#include "kernels/ops/ops_kernels.h"

namespace infertune {

void rms_norm(std::span<const float> x, std::span<const float> gain, float eps, std::span<float> out) {
  ops_kernels().rms_norm(x.data(), gain.data(), eps, x.size(), out.data());
}

}  // namespace infertune
