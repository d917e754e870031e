#pragma once
// The forward pass's view of the thread pool: a pool (persistent workers, placed once, see
// engine/threading/thread_pool.h) and how many of its threads this step uses (-t for one-token steps, -tb
// for batches). Cheap to copy; the pool must outlive it. The calling thread works as thread 0.
#include <cstddef>

#include "engine/threading/thread_pool.h"
#include "kernels/result.h"

namespace infertune {

class ParallelFor {
 public:
  using RangeFn = ThreadPool::RangeFn;
  using TaskFn = ThreadPool::TaskFn;

  // n_threads in [1, pool.size()]; 0 or more is clamped into that range.
  ParallelFor(ThreadPool& pool, unsigned n_threads);

  unsigned n_threads() const { return n_threads_; }

  // How many threads run() and run_balanced() use for n_items: one per part of at least min_chunk items
  // (whole granules), at most n_threads(), at least 1.
  unsigned threads_for(size_t n_items, size_t min_chunk = 1, size_t granule = 1) const;

  // Splits [0, n_items) statically into at most n_threads() contiguous ranges of at least min_chunk items,
  // every boundary on a multiple of `granule` (sizes differ by at most one granule), and runs fn(begin, end)
  // on each, thread i always taking the i-th range; returns when all are done. fn must not throw. Errors
  // (from the pool: a nested or concurrent call, a task that threw) are returned.
  Status run(size_t n_items, RangeFn fn, size_t min_chunk = 1, size_t granule = 1) const;

  // The same ranges' items in smaller chunks (whole granules, at least min_chunk items), handed out as
  // threads finish their last: for work of even size whose threads may still run at different speeds (a
  // core shared with another job, a busier memory channel), where a static split leaves the fast threads
  // waiting for the slowest. A chunk may go to any thread, so fn must not depend on which one runs it.
  Status run_balanced(size_t n_items, RangeFn fn, size_t min_chunk = 1, size_t granule = 1) const;

  // fn(task, thread) once for every task in [0, n_tasks), handed out dynamically (for uneven tasks);
  // thread < n_threads(). Errors as run().
  Status tasks(size_t n_tasks, TaskFn fn) const;

 private:
  ThreadPool* pool_;
  unsigned n_threads_;
};

}  // namespace infertune
