#include "kernels/attention/attention_merge.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace infertune {

void merge_attention_partials(std::span<const AttentionPartial> parts, size_t iq, uint32_t dim, float* out,
                              float sink) {
  float max = -std::numeric_limits<float>::infinity();
  for (const AttentionPartial& part : parts) max = std::max(max, part.max[iq]);
  std::fill_n(out, dim, 0.0f);
  float sum = 0;
  for (const AttentionPartial& part : parts) {
    if (part.sum[iq] == 0) continue;  // no keys in this part (its max is -inf)
    const float weight = std::exp(part.max[iq] - max);
    sum += weight * part.sum[iq];
    const float* acc = part.acc + iq * dim;
    for (uint32_t d = 0; d < dim; ++d) out[d] += weight * acc[d];
  }
  if (sink != -std::numeric_limits<float>::infinity()) sum += std::exp(sink - max);
  const float inverse = 1.0f / sum;
  for (uint32_t d = 0; d < dim; ++d) out[d] *= inverse;
}

}  // namespace infertune
