#pragma once
// A set of parse stacks (GrammarMatcher's state), stored flat: stack i is one run of a single vector. Copying a set,
// clearing it and filling it again then cost no allocation once the buffers have grown, which is what makes a
// matcher step cheap enough to take for every token of a vocabulary when a grammar masks one.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace infertune {

class ParseStacks {
 public:
  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  std::span<const uint32_t> operator[](size_t i) const {
    const uint32_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::span<const uint32_t>(data_).subspan(begin, ends_[i] - begin);
  }
  std::span<const uint32_t> back() const { return (*this)[size() - 1]; }

  void clear() {
    data_.clear();
    ends_.clear();
  }
  void push(std::span<const uint32_t> stack) {
    data_.insert(data_.end(), stack.begin(), stack.end());
    ends_.push_back(static_cast<uint32_t>(data_.size()));
  }
  // `stack` with one more entry on top.
  void push(std::span<const uint32_t> stack, uint32_t top) {
    data_.insert(data_.end(), stack.begin(), stack.end());
    data_.push_back(top);
    ends_.push_back(static_cast<uint32_t>(data_.size()));
  }
  void pop_back() {
    ends_.pop_back();
    data_.resize(ends_.empty() ? 0 : ends_.back());
  }

  // Sorts the stacks and drops repeats (the state is a set, and a repeat would double every later step's work).
  // `scratch` receives the old buffers.
  void dedupe(ParseStacks& scratch) {
    if (size() < 2) return;
    order_.resize(size());
    for (uint32_t i = 0; i < order_.size(); ++i) order_[i] = i;
    const auto less = [this](uint32_t a, uint32_t b) {
      const auto x = (*this)[a], y = (*this)[b];
      return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end());
    };
    std::sort(order_.begin(), order_.end(), less);
    scratch.clear();
    for (size_t k = 0; k < order_.size(); ++k) {
      const auto stack = (*this)[order_[k]];
      if (k > 0 && std::ranges::equal(stack, (*this)[order_[k - 1]])) continue;
      scratch.push(stack);
    }
    std::swap(data_, scratch.data_);
    std::swap(ends_, scratch.ends_);
  }

 private:
  std::vector<uint32_t> data_;
  std::vector<uint32_t> ends_;   // [stack] one past its last entry in data_
  std::vector<uint32_t> order_;  // dedupe's sort order, kept for its capacity
};

}  // namespace infertune
