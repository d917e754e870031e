// KV cache bookkeeping without any tensors: cells handed out and freed, the sequence operations (remove a
// range, copy = share cells, keep one, shift positions) with llama.cpp's conventions for negative
// arguments, the positions each sequence holds, and the lookup attention uses (a sequence's cells by
// position).
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "engine/kv/kv_cells.h"

namespace infertune {
namespace {

// Allocates one cell per position for `seqs`, returning the cells.
std::vector<uint32_t> add(KvCells& cells, std::vector<int32_t> pos, SeqSet seqs) {
  std::vector<SeqSet> sets(pos.size(), seqs);
  std::vector<uint32_t> out(pos.size());
  EXPECT_TRUE(cells.allocate(pos, sets, out));
  return out;
}

SeqSet seqs(std::initializer_list<SeqId> ids) {
  SeqSet s;
  for (SeqId id : ids) s.insert(id);
  return s;
}

TEST(SeqSet, MembershipAndFirst) {
  SeqSet s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.first(), -1);
  s.insert(200);
  s.insert(3);
  s.insert(-1);   // ignored
  s.insert(256);  // ignored
  EXPECT_EQ(s.count(), 2);
  EXPECT_EQ(s.first(), 3);
  EXPECT_TRUE(s.contains(200));
  EXPECT_FALSE(s.contains(256));
  s.erase(3);
  EXPECT_EQ(s.first(), 200);
}

TEST(KvCells, AllocatesLowestFreeCellsAndRefusesWhenFull) {
  KvCells cells(6);
  const auto a = add(cells, {0, 1, 2}, SeqSet::of(0));
  EXPECT_EQ(a, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(cells.n_used(), 3u);
  EXPECT_EQ(cells.used_end(), 3u);
  cells.release(std::array<uint32_t, 1>{1});
  const auto b = add(cells, {0, 1}, SeqSet::of(1));
  EXPECT_EQ(b, (std::vector<uint32_t>{1, 3}));  // the hole first
  // Three more do not fit in the two free cells: nothing changes.
  std::vector<SeqSet> sets(3, SeqSet::of(2));
  std::vector<uint32_t> out(3, 99);
  std::vector<int32_t> pos = {0, 1, 2};
  EXPECT_FALSE(cells.allocate(pos, sets, out));
  EXPECT_EQ(cells.n_used(), 4u);
  EXPECT_EQ(out[0], 99u);
  EXPECT_EQ(cells.seq_count(2), 0u);
}

TEST(KvCells, RemoveRangesFollowLlamaCppConventions) {
  KvCells cells(16);
  add(cells, {0, 1, 2, 3, 4, 5}, SeqSet::of(0));
  add(cells, {0, 1, 2}, SeqSet::of(1));
  cells.seq_rm(0, 2, 4);  // [2, 4)
  EXPECT_EQ(cells.seq_count(0), 4u);
  EXPECT_EQ(cells.seq_pos_max(0), 5);
  cells.seq_rm(0, 4, -1);  // to the end
  EXPECT_EQ(cells.seq_pos_max(0), 1);
  cells.seq_rm(0, -1, 1);  // from the start
  EXPECT_EQ(cells.seq_pos_min(0), 1);
  EXPECT_EQ(cells.seq_count(1), 3u);  // the other sequence is untouched
  cells.seq_rm(-1, 2, -1);            // every sequence
  EXPECT_EQ(cells.seq_pos_max(1), 1);
  EXPECT_EQ(cells.n_used(), 3u);  // seq 0 pos 1, seq 1 pos 0 and 1
  cells.seq_rm(-1, -1, -1);
  EXPECT_EQ(cells.n_used(), 0u);
  EXPECT_EQ(cells.used_end(), 0u);
  EXPECT_EQ(cells.seq_pos_max(0), -1);
}

TEST(KvCells, CopySharesCellsAndRemovalFreesOnlyUnsharedOnes) {
  KvCells cells(8);
  add(cells, {0, 1, 2, 3}, SeqSet::of(0));
  cells.seq_cp(0, 1, -1, -1);
  cells.seq_cp(0, 2, 0, 2);       // only the first two positions
  EXPECT_EQ(cells.n_used(), 4u);  // stored once
  EXPECT_EQ(cells.seq_count(1), 4u);
  EXPECT_EQ(cells.seq_count(2), 2u);
  EXPECT_EQ(cells[0].seqs, seqs({0, 1, 2}));
  cells.seq_rm(0, -1, -1);
  EXPECT_EQ(cells.n_used(), 4u);  // still held by seq 1
  cells.seq_rm(1, 2, -1);
  EXPECT_EQ(cells.n_used(), 2u);  // positions 2 and 3 had no other holder
  EXPECT_EQ(cells.seq_pos_max(2), 1);
}

TEST(KvCells, KeepDropsEveryOtherSequence) {
  KvCells cells(8);
  add(cells, {0, 1}, seqs({0, 1, 2}));
  add(cells, {2, 3}, SeqSet::of(1));
  add(cells, {2}, SeqSet::of(2));
  cells.seq_keep(1);
  EXPECT_EQ(cells.n_used(), 4u);
  EXPECT_EQ(cells.seq_count(0), 0u);
  EXPECT_EQ(cells.seq_count(2), 0u);
  EXPECT_EQ(cells.seq_count(1), 4u);
  EXPECT_EQ(cells[0].seqs, SeqSet::of(1));
}

TEST(KvCells, ShiftMovesPositionsFreesThoseBelowZeroAndReportsTheMovedCells) {
  KvCells cells(8);
  add(cells, {0, 1, 2, 3, 4}, SeqSet::of(0));
  add(cells, {0, 1}, SeqSet::of(1));
  // llama.cpp's context shift: drop [1, 3), move [3, end) back by 2.
  cells.seq_rm(0, 1, 3);
  const auto moved = cells.seq_add(0, 3, -1, -2);
  EXPECT_EQ(moved, (std::vector<uint32_t>{3, 4}));
  std::vector<uint32_t> order;
  std::vector<int32_t> pos;
  cells.seq_cells(0, order, pos);
  EXPECT_EQ(pos, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(order, (std::vector<uint32_t>{0, 3, 4}));
  EXPECT_EQ(cells.seq_pos_max(1), 1);  // untouched
  // Moving below 0 frees the cell.
  const auto gone = cells.seq_add(0, -1, -1, -2);
  EXPECT_EQ(gone, (std::vector<uint32_t>{4}));
  EXPECT_EQ(cells.seq_count(0), 1u);
  EXPECT_TRUE(cells.seq_add(0, -1, -1, 0).empty());
}

TEST(KvCells, SequenceCellsAreOrderedByPosition) {
  KvCells cells(8);
  add(cells, {5, 6}, SeqSet::of(0));
  add(cells, {0, 7}, SeqSet::of(1));
  add(cells, {1, 2}, SeqSet::of(0));
  cells.seq_cp(1, 0, 0, 1);  // cell 2 (seq 1, pos 0) joins seq 0
  std::vector<uint32_t> order;
  std::vector<int32_t> pos;
  cells.seq_cells(0, order, pos);
  EXPECT_EQ(pos, (std::vector<int32_t>{0, 1, 2, 5, 6}));
  EXPECT_EQ(order, (std::vector<uint32_t>{2, 4, 5, 0, 1}));
}

TEST(KvCells, ClearFreesEverything) {
  KvCells cells(4);
  add(cells, {0, 1, 2, 3}, SeqSet::of(0));
  EXPECT_EQ(cells.n_free(), 0u);
  cells.clear();
  EXPECT_EQ(cells.n_free(), 4u);
  EXPECT_EQ(add(cells, {9}, SeqSet::of(3)), (std::vector<uint32_t>{0}));
}

}  // namespace
}  // namespace infertune
