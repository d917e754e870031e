#pragma once
// A set of sequence ids, 0 <= id < kMaxSequences: the sequences a batch token belongs to, or the sequences
// a KV cache cell serves (a prefix shared by several sequences is one cell holding all of them). A fixed
// 256-bit set, so cells stay small and copyable and membership is one bit test.
#include <bit>
#include <cstdint>

namespace infertune {

using SeqId = int32_t;

// The most sequences one context can hold (-np); llama.cpp's limit too.
inline constexpr uint32_t kMaxSequences = 256;

class SeqSet {
 public:
  SeqSet() = default;
  static SeqSet of(SeqId id) {
    SeqSet s;
    s.insert(id);
    return s;
  }

  // Ids outside [0, kMaxSequences) are never members; insert ignores them (callers validate first).
  static bool valid(SeqId id) { return id >= 0 && static_cast<uint32_t>(id) < kMaxSequences; }
  bool contains(SeqId id) const { return valid(id) && (words_[word(id)] >> bit(id) & 1u) != 0; }
  void insert(SeqId id) {
    if (valid(id)) words_[word(id)] |= uint64_t{1} << bit(id);
  }
  void erase(SeqId id) {
    if (valid(id)) words_[word(id)] &= ~(uint64_t{1} << bit(id));
  }
  void clear() { *this = SeqSet(); }

  bool empty() const { return (words_[0] | words_[1] | words_[2] | words_[3]) == 0; }
  int count() const {
    return std::popcount(words_[0]) + std::popcount(words_[1]) + std::popcount(words_[2]) + std::popcount(words_[3]);
  }
  // The smallest member, or -1 when empty.
  SeqId first() const {
    for (int w = 0; w < kWords; ++w) {
      if (words_[w] != 0) return w * 64 + std::countr_zero(words_[w]);
    }
    return -1;
  }
  bool operator==(const SeqSet&) const = default;

 private:
  static constexpr int kWords = kMaxSequences / 64;
  static int word(SeqId id) { return id / 64; }
  static int bit(SeqId id) { return id % 64; }
  uint64_t words_[kWords] = {};
};

}  // namespace infertune
