#include "engine/kv/kv_cache.h"

#include <algorithm>
#include <array>

namespace infertune {

Result<KvCache> KvCache::create(const KvCacheParams& params) {
  if (params.n_seq_max == 0 || params.n_seq_max > kMaxSequences) {
    return fail("{} parallel sequences (-np): must be within 1..{}", params.n_seq_max, kMaxSequences);
  }
  if (params.layout.n_cells == 0) return fail("KV cache of 0 cells (-c 0 after defaults)");
  auto storage = KvStorage::create(params.layout);
  if (!storage) return storage.error();
  KvCache cache;
  cache.storage_ = std::move(*storage);
  cache.cells_ = KvCells(params.layout.n_cells);
  cache.n_seq_max_ = params.n_seq_max;
  cache.rope_ = params.rope;
  cache.layer_rope_ = params.layer_rope;
  cache.causal_ = params.causal;
  return cache;
}

Status KvCache::place(std::span<const int32_t> positions, std::span<const SeqSet> seqs, KvUbatch& out) {
  const size_t n = positions.size();
  out.positions = positions;
  out.cells.resize(n);
  if (!cells_.allocate(positions, seqs, out.cells)) {
    return fail("KV cache full: {} new tokens, {} of {} cells free (use a larger -c, or free sequences)", n,
                cells_.n_free(), cells_.size());
  }
  // One group per first sequence id, in order of first appearance.
  std::array<int32_t, kMaxSequences> group_of;
  group_of.fill(-1);
  out.n_groups = 0;
  for (size_t i = 0; i < n; ++i) {
    const SeqId seq = seqs[i].first();
    if (group_of[seq] < 0) {
      group_of[seq] = static_cast<int32_t>(out.n_groups);
      if (out.groups.size() <= out.n_groups) out.groups.emplace_back();
      KvAttentionGroup& g = out.groups[out.n_groups++];
      g.seq = seq;
      g.rows.clear();
      g.n_keys.clear();
      cells_.seq_cells(seq, g.key_cells, g.key_pos);
    }
    KvAttentionGroup& g = out.groups[group_of[seq]];
    g.rows.push_back(static_cast<uint32_t>(i));
    // Causal: every key at a position up to the token's own (its own cell included); else every key.
    const auto end = causal_ ? std::upper_bound(g.key_pos.begin(), g.key_pos.end(), positions[i]) : g.key_pos.end();
    g.n_keys.push_back(static_cast<uint32_t>(end - g.key_pos.begin()));
  }
  return {};
}

Status KvCache::check_seq(SeqId seq, bool allow_all, const char* op) const {
  if (allow_all && seq < 0) return {};
  if (seq < 0 || static_cast<uint32_t>(seq) >= n_seq_max_) {
    return fail("{}: sequence id {} is outside 0..{} (-np {})", op, seq, n_seq_max_ - 1, n_seq_max_);
  }
  return {};
}

Status KvCache::seq_rm(SeqId seq, int32_t p0, int32_t p1) {
  if (Status s = check_seq(seq, true, "seq_rm"); !s) return s;
  cells_.seq_rm(seq, p0, p1);
  return {};
}

Status KvCache::seq_cp(SeqId src, SeqId dst, int32_t p0, int32_t p1) {
  if (Status s = check_seq(src, false, "seq_cp"); !s) return s;
  if (Status s = check_seq(dst, false, "seq_cp"); !s) return s;
  cells_.seq_cp(src, dst, p0, p1);
  return {};
}

Status KvCache::seq_keep(SeqId seq) {
  if (Status s = check_seq(seq, false, "seq_keep"); !s) return s;
  cells_.seq_keep(seq);
  return {};
}

Status KvCache::seq_add(SeqId seq, int32_t p0, int32_t p1, int32_t delta) {
  if (Status s = check_seq(seq, true, "seq_add"); !s) return s;
  if (!shifts_blocked_.empty() && delta != 0) {
    return fail("seq_add: cannot shift positions: {} (run with --no-kv-offload to shift)", shifts_blocked_);
  }
  const std::vector<uint32_t> moved = cells_.seq_add(seq, p0, p1, delta);
  rotate_keys(moved, delta);
  return {};
}

void KvCache::rotate_keys(std::span<const uint32_t> cells, int32_t delta) {
  if (cells.empty() || rope_.n_rot == 0) return;
  const KvLayout& l = storage_.layout();
  std::vector<float> cos(rope_.n_rot / 2), sin(rope_.n_rot / 2);
  std::vector<float> row(static_cast<size_t>(l.n_head_kv) * l.head_dim_k);
  for (uint32_t layer = 0; layer < l.n_layers; ++layer) {
    const RopeParams& rope = layer_rope_.empty() ? rope_ : layer_rope_[layer];
    // A pure rotation by delta: the keys already carry rope's magnitude factor (YaRN's mscale) once.
    RopeParams shift = rope;
    shift.attn_factor = rope.attn_factor / rope_mscale(rope);
    rope_angles(shift, delta, cos, sin);
    for (uint32_t cell : cells) {
      storage_.read_k(layer, cell, row);
      for (uint32_t h = 0; h < l.n_head_kv; ++h) {
        rope_rotate(rope, cos, sin, std::span<float>(row).subspan(static_cast<size_t>(h) * l.head_dim_k, l.head_dim_k));
      }
      storage_.write_k(layer, cell, row);
    }
  }
}

}  // namespace infertune
