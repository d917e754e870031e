#pragma once
// The combine step of split-K attention: the partial states of one query over disjoint key ranges
// (AttentionPartial: max m_i, sum l_i, accumulator a_i, each relative to its own max) give the query's
// attention over all of them, the log-sum-exp way:
//   M = max_i m_i,   w_i = exp(m_i - M),   out = (sum_i w_i a_i) / (sum_i w_i l_i).
// A part with no keys (m_i = -inf, l_i = 0, a_i = 0) weighs 0. At least one part must have keys.
// This is exactly the softmax over the union of the ranges; only float rounding differs.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "kernels/attention/attention.h"

namespace infertune {

// out [dim] = the merge of query iq's state in every part (each part's acc rows are dim wide). `sink`: the query
// head's attention sink (AttentionProblem::sinks), -inf for none, adds exp(sink - M) to the denominator.
void merge_attention_partials(std::span<const AttentionPartial> parts, size_t iq, uint32_t dim, float* out,
                              float sink = -std::numeric_limits<float>::infinity());

}  // namespace infertune
