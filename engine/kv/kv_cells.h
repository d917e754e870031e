#pragma once
// The bookkeeping of a KV cache, without the tensors: for every cell, the position it holds and the set
// of sequences it serves (empty: free). A prefix shared by several sequences is one cell per position
// with all of them in its set, so it is stored once. Cells are handed out lowest index first; attention
// looks a sequence's cells up by position (seq_cells), so where a cell sits does not matter.
//
// Sequence operations follow llama.cpp's: seq < 0 means every sequence, p0 < 0 means from position 0,
// p1 < 0 means to the end, and ranges are [p0, p1).
#include <cstdint>
#include <span>
#include <vector>

#include "engine/batch/seq_set.h"

namespace infertune {

struct KvCell {
  int32_t pos = -1;
  SeqSet seqs;
  bool free() const { return seqs.empty(); }
};

class KvCells {
 public:
  explicit KvCells(uint32_t n_cells = 0) : cells_(n_cells) {}

  uint32_t size() const { return static_cast<uint32_t>(cells_.size()); }
  uint32_t n_used() const { return n_used_; }
  uint32_t n_free() const { return size() - n_used_; }
  // One past the highest used cell: scans stop here.
  uint32_t used_end() const { return used_end_; }
  const KvCell& operator[](uint32_t i) const { return cells_[i]; }

  // Takes pos.size() free cells (lowest first) for tokens at pos[i] in seqs[i], writing their indices to
  // out. Returns false, changing nothing, when fewer cells are free.
  bool allocate(std::span<const int32_t> pos, std::span<const SeqSet> seqs, std::span<uint32_t> out);
  // Frees the given cells whatever they hold (undoes allocate).
  void release(std::span<const uint32_t> cells);

  // Removes seq from the cells in [p0, p1); cells left with no sequence are freed.
  void seq_rm(SeqId seq, int32_t p0, int32_t p1);
  // Adds dst to every cell of src in [p0, p1): the copy shares the cells (no K/V is copied).
  void seq_cp(SeqId src, SeqId dst, int32_t p0, int32_t p1);
  // Frees every cell not in seq and removes every other sequence from the rest.
  void seq_keep(SeqId seq);
  // Adds delta to the position of every cell of seq in [p0, p1). A cell shared with other sequences moves
  // for all of them (it is one cell). Cells moved below position 0 are freed. Returns the cells that moved
  // and are still used (their keys must be rotated by delta).
  std::vector<uint32_t> seq_add(SeqId seq, int32_t p0, int32_t p1, int32_t delta);
  void clear();

  // The smallest / largest position held for seq, or -1 when it has none.
  int32_t seq_pos_min(SeqId seq) const;
  int32_t seq_pos_max(SeqId seq) const;
  // How many cells hold seq.
  uint32_t seq_count(SeqId seq) const;

  // The cells of seq in order of position (ties by cell index), and their positions.
  void seq_cells(SeqId seq, std::vector<uint32_t>& cells, std::vector<int32_t>& positions) const;

 private:
  static bool in_range(int32_t pos, int32_t p0, int32_t p1) { return pos >= p0 && pos < p1; }
  static void normalize(int32_t& p0, int32_t& p1);
  bool matches(const KvCell& cell, SeqId seq) const { return !cell.free() && (seq < 0 || cell.seqs.contains(seq)); }
  void free_cell(uint32_t i);
  void shrink_used_end();

  std::vector<KvCell> cells_;
  uint32_t n_used_ = 0;
  uint32_t used_end_ = 0;
};

}  // namespace infertune
