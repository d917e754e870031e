#pragma once
// The "scalar" attention variant: the reference (every dot product and the softmax in double, exact
// two-pass softmax) that the SIMD kernels are tested against, and a plain scalar flash-attention kernel
// (key tiles, online softmax, float) that shows the algorithm without vector code.
#include "kernels/attention/attention.h"

namespace infertune {

void reference_attention(const AttentionProblem& problem, AttentionScratch& scratch);
void scalar_flash_attention(const AttentionProblem& problem, AttentionScratch& scratch);

// Decodes the row of `cell` into dst [rows.dim] with the reference codecs.
void decode_kv_row(const KvHeadRows& rows, uint32_t cell, float* dst);

// Keys per tile of the flash kernels: a tile of keys and one of values (f32) stay in L1 / L2.
inline constexpr uint32_t kAttentionKeyTile = 64;

}  // namespace infertune
