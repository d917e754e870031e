#include "engine/kv/kv_cells.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace infertune {

void KvCells::normalize(int32_t& p0, int32_t& p1) {
  if (p0 < 0) p0 = 0;
  if (p1 < 0) p1 = std::numeric_limits<int32_t>::max();
}

bool KvCells::allocate(std::span<const int32_t> pos, std::span<const SeqSet> seqs, std::span<uint32_t> out) {
  if (pos.size() > n_free()) return false;
  size_t next = 0;
  for (uint32_t i = 0; i < size() && next < pos.size(); ++i) {
    if (!cells_[i].free()) continue;
    cells_[i].pos = pos[next];
    cells_[i].seqs = seqs[next];
    out[next++] = i;
    ++n_used_;
    used_end_ = std::max(used_end_, i + 1);
  }
  return true;
}

void KvCells::free_cell(uint32_t i) {
  if (cells_[i].free()) return;
  cells_[i] = KvCell{};
  --n_used_;
}

void KvCells::shrink_used_end() {
  while (used_end_ > 0 && cells_[used_end_ - 1].free()) --used_end_;
}

void KvCells::release(std::span<const uint32_t> cells) {
  for (uint32_t i : cells) free_cell(i);
  shrink_used_end();
}

void KvCells::seq_rm(SeqId seq, int32_t p0, int32_t p1) {
  normalize(p0, p1);
  for (uint32_t i = 0; i < used_end_; ++i) {
    KvCell& cell = cells_[i];
    if (!matches(cell, seq) || !in_range(cell.pos, p0, p1)) continue;
    if (seq < 0) {
      free_cell(i);
    } else {
      cell.seqs.erase(seq);
      if (cell.free()) {
        cell.pos = -1;
        --n_used_;
      }
    }
  }
  shrink_used_end();
}

void KvCells::seq_cp(SeqId src, SeqId dst, int32_t p0, int32_t p1) {
  if (src == dst || src < 0 || dst < 0) return;
  normalize(p0, p1);
  for (uint32_t i = 0; i < used_end_; ++i) {
    if (matches(cells_[i], src) && in_range(cells_[i].pos, p0, p1)) cells_[i].seqs.insert(dst);
  }
}

void KvCells::seq_keep(SeqId seq) {
  for (uint32_t i = 0; i < used_end_; ++i) {
    if (cells_[i].free()) continue;
    if (cells_[i].seqs.contains(seq)) {
      cells_[i].seqs = SeqSet::of(seq);
    } else {
      free_cell(i);
    }
  }
  shrink_used_end();
}

std::vector<uint32_t> KvCells::seq_add(SeqId seq, int32_t p0, int32_t p1, int32_t delta) {
  std::vector<uint32_t> moved;
  if (delta == 0) return moved;
  normalize(p0, p1);
  for (uint32_t i = 0; i < used_end_; ++i) {
    KvCell& cell = cells_[i];
    if (!matches(cell, seq) || !in_range(cell.pos, p0, p1)) continue;
    const int64_t pos = static_cast<int64_t>(cell.pos) + delta;
    if (pos < 0) {
      free_cell(i);
    } else {
      cell.pos = static_cast<int32_t>(std::min<int64_t>(pos, std::numeric_limits<int32_t>::max()));
      moved.push_back(i);
    }
  }
  shrink_used_end();
  return moved;
}

void KvCells::clear() {
  std::fill(cells_.begin(), cells_.end(), KvCell{});
  n_used_ = 0;
  used_end_ = 0;
}

int32_t KvCells::seq_pos_min(SeqId seq) const {
  int32_t best = -1;
  for (uint32_t i = 0; i < used_end_; ++i) {
    if (matches(cells_[i], seq) && (best < 0 || cells_[i].pos < best)) best = cells_[i].pos;
  }
  return best;
}

int32_t KvCells::seq_pos_max(SeqId seq) const {
  int32_t best = -1;
  for (uint32_t i = 0; i < used_end_; ++i) {
    if (matches(cells_[i], seq)) best = std::max(best, cells_[i].pos);
  }
  return best;
}

uint32_t KvCells::seq_count(SeqId seq) const {
  uint32_t n = 0;
  for (uint32_t i = 0; i < used_end_; ++i) n += matches(cells_[i], seq) ? 1 : 0;
  return n;
}

void KvCells::seq_cells(SeqId seq, std::vector<uint32_t>& cells, std::vector<int32_t>& positions) const {
  cells.clear();
  positions.clear();
  bool sorted = true;
  for (uint32_t i = 0; i < used_end_; ++i) {
    if (!cells_[i].seqs.contains(seq)) continue;
    sorted = sorted && (positions.empty() || positions.back() <= cells_[i].pos);
    cells.push_back(i);
    positions.push_back(cells_[i].pos);
  }
  if (sorted) return;  // the usual case: cells handed out in order of position
  std::vector<uint32_t> order(cells.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return positions[a] < positions[b]; });
  std::vector<uint32_t> sorted_cells(cells.size());
  std::vector<int32_t> sorted_positions(cells.size());
  for (size_t j = 0; j < order.size(); ++j) {
    sorted_cells[j] = cells[order[j]];
    sorted_positions[j] = positions[order[j]];
  }
  cells.swap(sorted_cells);
  positions.swap(sorted_positions);
}

}  // namespace infertune
