#pragma once
// A batch may only add positions a sequence does not hold yet: a (sequence, position) pair that is already
// in the KV cache, or that appears twice in the batch, would give that sequence two keys for one position
// (attention would see both). llama.cpp rejects such batches too; the caller removes the old positions
// first (seq_rm) when it means to recompute them.
#include "engine/batch/batch.h"
#include "engine/kv/kv_cells.h"
#include "kernels/result.h"

namespace infertune {

// Errors name the batch index, the sequence and the position.
Status check_positions_unused(const Batch& batch, const KvCells& cells);

}  // namespace infertune
