#pragma once
// The KV cache of a context: storage (KvStorage: per layer K and V rows in their types) and bookkeeping
// (KvCells: which cells hold which positions of which sequences), the sequence operations on both, and
// the memory accounting the harness reads. All sequences share the one pool of n_cells cells (-c).
//
// place() puts the tokens of one ubatch into free cells and works out, per token, which cached keys it
// attends to: the cells of its sequence (its first sequence id when it has several: the others share
// the same history) at positions up to its own, ordered by position. This includes the cells of the same
// ubatch, so tokens of different sequences mixed in one ubatch never see each other.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/batch/seq_set.h"
#include "engine/kv/kv_cells.h"
#include "engine/kv/kv_storage.h"
#include "kernels/ops/rope.h"
#include "kernels/result.h"

namespace infertune {

// The tokens of one ubatch that see the keys of one sequence.
struct KvAttentionGroup {
  SeqId seq = 0;
  std::vector<uint32_t> rows;       // [n] ubatch rows (token indices), ascending
  std::vector<uint32_t> n_keys;     // [n] row rows[i] attends to key_cells[0 .. n_keys[i])
  std::vector<uint32_t> key_cells;  // the sequence's cells, this ubatch's included, by position
  std::vector<int32_t> key_pos;     // [key_cells.size()] their positions
};

// Where one ubatch's tokens go and what each attends to; built by KvCache::place, read by the forward pass.
struct KvUbatch {
  std::span<const int32_t> positions;    // [n] token i is at positions[i]
  std::vector<uint32_t> cells;           // [n] token i's K and V are stored in cell cells[i]
  std::vector<KvAttentionGroup> groups;  // every token is in exactly one group
  size_t n_groups = 0;                   // groups[0 .. n_groups) are this ubatch's (the rest are reused storage)
  bool flash_attention = false;          // which attention kernel to run
  std::span<const KvAttentionGroup> active_groups() const { return {groups.data(), n_groups}; }
};

struct KvCacheParams {
  KvLayout layout;                     // n_cells is the context size (-c)
  uint32_t n_seq_max = 1;              // sequence ids are 0 .. n_seq_max - 1 (-np)
  RopeParams rope;                     // how keys were rotated: a position shift re-rotates them
  std::vector<RopeParams> layer_rope;  // [n_layers] when layers differ (gemma3's sliding ones), else empty
  // false: a token attends to every cell of its sequence, later positions too (the bidirectional attention of an
  // embedding model, {arch}.attention.causal = false); the caller puts a whole sequence in one ubatch.
  bool causal = true;
};

class KvCache {
 public:
  static Result<KvCache> create(const KvCacheParams& params);

  KvStorage& storage() { return storage_; }
  const KvStorage& storage() const { return storage_; }
  const KvCells& cells() const { return cells_; }
  uint32_t n_cells() const { return cells_.size(); }
  uint32_t n_seq_max() const { return n_seq_max_; }
  bool causal() const { return causal_; }

  // Memory accounting: the whole allocation, what one cached token costs (K and V of every layer), and
  // what the used cells hold.
  size_t bytes() const { return storage_.bytes(); }
  size_t bytes_per_token() const { return storage_.bytes_per_cell(); }
  size_t bytes_used() const { return storage_.bytes_per_cell() * cells_.n_used(); }
  uint32_t n_used() const { return cells_.n_used(); }
  uint32_t n_free() const { return cells_.n_free(); }

  // Places a ubatch (positions [n], seqs [n]; validated by the caller) into free cells and fills `out`.
  // Errors, changing nothing, when fewer than n cells are free.
  Status place(std::span<const int32_t> positions, std::span<const SeqSet> seqs, KvUbatch& out);
  // Frees the cells of placed ubatches (when their evaluation failed).
  void release(std::span<const uint32_t> cells) { cells_.release(cells); }

  // Sequence operations (see KvCells): seq ids must be < n_seq_max, or -1 for all where allowed.
  Status seq_rm(SeqId seq, int32_t p0, int32_t p1);
  Status seq_cp(SeqId src, SeqId dst, int32_t p0, int32_t p1);
  Status seq_keep(SeqId seq);
  // Shifts positions by delta and rotates the moved keys by delta (llama.cpp's K-shift): rope's rotation
  // by p + delta is its rotation by p followed by one by delta, so the cached keys become what they would
  // have been at their new positions (up to the K type's rounding, which is applied again).
  Status seq_add(SeqId seq, int32_t p0, int32_t p1, int32_t delta);
  // Makes seq_add fail, saying `why`: the keys of some layers are held elsewhere (the GPU) and this cache
  // cannot rotate them.
  void block_shifts(std::string why) { shifts_blocked_ = std::move(why); }
  int32_t seq_pos_min(SeqId seq) const { return cells_.seq_pos_min(seq); }
  int32_t seq_pos_max(SeqId seq) const { return cells_.seq_pos_max(seq); }
  void clear() { cells_.clear(); }

 private:
  Status check_seq(SeqId seq, bool allow_all, const char* op) const;
  void rotate_keys(std::span<const uint32_t> cells, int32_t delta);

  KvStorage storage_;
  KvCells cells_;
  uint32_t n_seq_max_ = 1;
  bool causal_ = true;
  RopeParams rope_;
  std::vector<RopeParams> layer_rope_;
  std::string shifts_blocked_;  // non-empty: why seq_add cannot shift positions
};

}  // namespace infertune
