#include "kernels/ops/softmax.h"

#include "kernels/ops/ops_kernels.h"

namespace infertune {

void softmax(std::span<float> x) { ops_kernels().softmax(x.data(), x.size()); }

}  // namespace infertune
