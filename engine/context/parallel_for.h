#pragma once
// A minimal parallel-for over std::threads, started per call: enough to split a matmul's weight rows
// between -t N threads. (A persistent pool with CPU placement replaces it later; the interface stays.)
#include <cstddef>
#include <functional>

namespace infertune {

class ParallelFor {
 public:
  explicit ParallelFor(unsigned n_threads) : n_threads_(n_threads == 0 ? 1 : n_threads) {}

  unsigned n_threads() const { return n_threads_; }

  // Splits [0, n_items) into at most n_threads() contiguous chunks of at least min_chunk items and runs
  // fn(begin, end) on each, the calling thread taking the first; returns when all are done. fn must not
  // throw. When a thread cannot be started its chunk runs on the calling thread.
  void run(size_t n_items, const std::function<void(size_t begin, size_t end)>& fn, size_t min_chunk = 1) const;

 private:
  unsigned n_threads_;
};

}  // namespace infertune
