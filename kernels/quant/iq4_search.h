#pragma once
// The encoder half that IQ4_NL and IQ4_XS share: ggml's quantize_row_iq4_nl_impl. A 32-value block is coded
// as d * kIq4Values[q]; its scale d is the weighted least-squares fit (weights x^2 without an importance
// matrix, so large values dominate) over 16 candidate code assignments: the one that maps the value
// of largest magnitude onto -127, and those from the inverse scales (-127 + t) / max for t = -7..7.
// The arithmetic follows ggml's operation for operation (same products, same summation order, same
// comparisons), because that is what makes the bytes match; re-run the fixture tests after any edit.
#include <cstdint>

namespace infertune::basic_quant {

// Index of the codebook value nearest to v; halfway between two values the upper one wins.
int iq4_nearest_index(float v);

// The fitted scale of one block (may be negative), or 0 when every |x| is below 1e-15 (ggml's
// GROUP_MAX_EPS) or every weight is 0. weight: per value, or null for x^2.
//   x, weight: [32]
float iq4_fit_block_scale(const float* x, const float* weight);

// With an importance matrix, ggml weights value j by importance[j] * sqrt(sigma2 + x[j]^2), where sigma2 is
// twice the mean square of the super-block (the block itself for IQ4_NL).
//   x, importance, weight: [n]
void iq4_importance_weights(const float* x, const float* importance, int n, float* weight);

// qs <- the nibbles of iq4_nearest_index(x[j] * inv_scale).
//   x: [32]   qs: [16]
void iq4_encode_block(const float* x, float inv_scale, uint8_t* qs);

}  // namespace infertune::basic_quant
