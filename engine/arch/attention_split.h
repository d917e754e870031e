#pragma once
// How the attention problems of one layer are spread over the threads. Each problem (one KV head, a block
// of query rows, their keys) is a task handed out dynamically; when that leaves threads idle — a single
// sequence decoding with fewer KV heads than threads, or one long context among short ones — the keys of
// the big problems are split too (split-K, "flash decoding"): each piece sums its key range into a partial
// state (kernels/attention/attention.h: AttentionPartial), then each split problem's pieces are merged
// (kernels/attention/attention_merge.h): on the calling thread when that is small (a decoding step), else
// in a second parallel phase.
//
// The split is chosen per call from an estimate of each problem's work (keys x (queries + 1): the dot
// products and weighted sums per query plus decoding each key and value row once) against the threads:
// the estimated finish time of the dynamic hand-out (largest first, each to the least loaded thread) with
// and without splitting, the split costing a little per piece and per call (the merge). Pieces
// keep at least kMinKeysPerPiece keys. A split result equals the unsplit one up to float rounding (the
// same softmax, summed in another order); so attention is batch-invariant bit for bit only where no split
// is chosen (short contexts, or enough problems to keep every thread busy).
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/threading/parallel_for.h"
#include "kernels/attention/attention.h"
#include "kernels/result.h"

namespace infertune {

inline constexpr uint32_t kMinKeysPerPiece = 256;

// Pieces per problem (>= 1 each) for n_threads threads; all 1 when splitting is not estimated to help.
std::vector<uint32_t> plan_key_splits(std::span<const AttentionProblem> problems, unsigned n_threads);

// Reused between calls (no allocation in steady state).
struct SplitAttentionBuffers {
  struct Piece {
    uint32_t problem;
    uint32_t key_begin, key_end;
    uint32_t part;  // index into parts; meaningless for a problem that is not split
  };
  std::vector<Piece> pieces;
  std::vector<AttentionPartial> parts;   // [pieces of split problems] their partial outputs
  std::vector<uint32_t> first_part;      // [problems] the problem's first part (pieces are consecutive)
  std::vector<uint32_t> splits;          // [problems] pieces per problem
  std::vector<uint32_t> split_problems;  // problems with more than one piece
  std::vector<size_t> part_offsets;      // [parts] where each part's arrays start in storage
  std::vector<float> storage;            // max, sum and acc of every part
};

// Computes every problem (already checked with check_attention_problem, no partial of their own) with
// `fn`, the keys split per plan_key_splits or, when `forced_splits` is given, into that many pieces per
// problem (at most one per key; for tests and benchmarks). scratch: one per thread.
Status run_split_attention(const ParallelFor& threads, AttentionFn fn, std::span<const AttentionProblem> problems,
                           std::span<AttentionScratch> scratch, SplitAttentionBuffers& buffers,
                           std::optional<uint32_t> forced_splits = std::nullopt);

}  // namespace infertune
