#include "engine/context/batch_positions.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace infertune {
namespace {

struct PlacedPosition {
  SeqId seq;
  int32_t pos;
  size_t index;  // in the batch
  bool operator<(const PlacedPosition& o) const { return seq != o.seq ? seq < o.seq : pos < o.pos; }
};

std::vector<PlacedPosition> sorted_positions(const Batch& batch) {
  std::vector<PlacedPosition> out;
  out.reserve(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    for (SeqId seq : batch.seq_ids(i)) out.push_back({seq, batch.pos(i), i});
  }
  std::stable_sort(out.begin(), out.end());
  return out;
}

// The distinct sequences of `positions` (sorted by sequence).
std::vector<SeqId> distinct_sequences(const std::vector<PlacedPosition>& positions) {
  std::vector<SeqId> seqs;
  for (const PlacedPosition& p : positions) {
    if (seqs.empty() || seqs.back() != p.seq) seqs.push_back(p.seq);
  }
  return seqs;
}

}  // namespace

Status check_positions_unused(const Batch& batch, const KvCells& cells) {
  const std::vector<PlacedPosition> positions = sorted_positions(batch);
  for (size_t k = 1; k < positions.size(); ++k) {
    const PlacedPosition& a = positions[k - 1];
    const PlacedPosition& b = positions[k];
    if (a.seq == b.seq && a.pos == b.pos) {
      return fail("decode: position {} of sequence {} appears twice in the batch (indices {} and {})", b.pos, b.seq,
                  a.index, b.index);
    }
  }
  const std::vector<SeqId> seqs = distinct_sequences(positions);
  // One pass over the used cells: a decode scans them for attention anyway, so this costs little.
  for (uint32_t c = 0; c < cells.used_end(); ++c) {
    const KvCell& cell = cells[c];
    if (cell.free()) continue;
    for (SeqId seq : seqs) {
      if (!cell.seqs.contains(seq)) continue;
      const PlacedPosition key{seq, cell.pos, 0};
      const auto it = std::lower_bound(positions.begin(), positions.end(), key);
      if (it != positions.end() && it->seq == seq && it->pos == cell.pos) {
        return fail(
            "decode: position {} of sequence {} at batch index {} is already in the KV cache (remove it with "
            "seq_rm to recompute it)",
            cell.pos, seq, it->index);
      }
    }
  }
  return {};
}

}  // namespace infertune
