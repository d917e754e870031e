#pragma once
// Pieces shared by the importance-weighted encoders (the *_weighted codecs in kernels/quant/TYPE.cpp), which
// reproduce ggml's quantize_TYPE with a non-null importance matrix. The matrix gives one weight per column
// of a tensor (how strongly that input feature was activated on a calibration text); ggml turns it into a
// per-value weight that also grows with the value's own size, and fits each block's scale (and offset) by
// weighted least squares instead of from its extremes. As everywhere under kernels/quant, the float
// arithmetic follows ggml's operation for operation: reordering a sum changes bytes.
#include <algorithm>
#include <cstdint>

namespace infertune::weighted {

// out[i] = importance[i] * sqrt(sigma2 + x[i]^2): ggml's weight of one value, where sigma2 is a per-row or
// per-super-block mean square that keeps small values from getting almost no weight.
//   importance, x, out: [n]
void value_weights(const float* importance, const float* x, float sigma2, int n, float* out);

// sum x[i]^2, summed in index order.
//   x: [n]
float sum_squares(const float* x, int64_t n);

// sum w[i], summed in index order.
//   w: [n]
float sum_of(const float* w, int n);

// ggml's make_qp_quants: fits non-negative x[i] (a super-block's sub-block scales or mins) as scale * L[i]
// with L[i] in [0, nmax], under weights w: the best of 9 inverse scales around nmax / max by weighted squared
// error, then up to five passes of single-code moves while the least-squares figure of merit improves.
// Returns the scale (0 for an all-zero x, with L all 0).
//   x, w, L: [n]
float fit_positive_scale(int n, int nmax, const float* x, const float* w, uint8_t* L);

// The 32-value formats (Q4_0 ... Q5_1) weight a row with sigma2 = the row's mean square and fit its blocks
// eight at a time (the lanes of kernels/quant/kquant_search.h): fit(first_block, count, weights) for each
// run of count <= 8 blocks, weights [count][32] from `importance` [n].
template <class Fit>
void for_weighted_block_runs(const float* x, const float* importance, int64_t n, Fit&& fit) {
  constexpr int kBlock = 32;
  constexpr int kRun = 8;
  const float sigma2 = sum_squares(x, n) / static_cast<float>(n);
  const int64_t n_blocks = n / kBlock;
  float weights[kRun * kBlock];
  for (int64_t first = 0; first < n_blocks; first += kRun) {
    const int count = static_cast<int>(std::min<int64_t>(kRun, n_blocks - first));
    value_weights(importance + first * kBlock, x + first * kBlock, sigma2, count * kBlock, weights);
    fit(first, count, static_cast<const float*>(weights));
  }
}

}  // namespace infertune::weighted
