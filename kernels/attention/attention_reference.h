#pragma once
// The "scalar" attention variant: the reference (every dot product and the softmax in double, exact
// two-pass softmax) that the SIMD kernels are tested against, and a plain scalar flash-attention kernel
// (key tiles, online softmax, float) that shows the algorithm without vector code.
#include <algorithm>

#include "kernels/attention/attention.h"

namespace infertune {

void reference_attention(const AttentionProblem& problem, AttentionScratch& scratch);
void scalar_flash_attention(const AttentionProblem& problem, AttentionScratch& scratch);

// Decodes the row of `cell` into dst [rows.dim] with the reference codecs.
void decode_kv_row(const KvHeadRows& rows, uint32_t cell, float* dst);

// The end of row r's keys within the problem's key range (<= key_begin: it sees none there).
inline uint32_t row_key_end(const AttentionProblem& p, size_t r) { return std::min(p.n_keys[r], p.key_end); }
// The end of every row's keys within the range.
inline uint32_t range_key_end(const AttentionProblem& p) {
  return std::min(*std::max_element(p.n_keys.begin(), p.n_keys.end()), p.key_end);
}

// Writes query iq's state (m, l, acc [v.dim]): into p.partial when set, else acc / l into out [v.dim].
void finish_query(const AttentionProblem& p, size_t iq, float m, float l, const float* acc, float* out);

// Keys per tile of the flash kernels: a tile of keys and one of values (f32) stay in L1 / L2.
inline constexpr uint32_t kAttentionKeyTile = 64;

}  // namespace infertune
