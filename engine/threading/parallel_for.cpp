#include "engine/threading/parallel_for.h"

#include <algorithm>

#include "engine/threading/static_split.h"

namespace infertune {

ParallelFor::ParallelFor(ThreadPool& pool, unsigned n_threads)
    : pool_(&pool), n_threads_(std::clamp(n_threads, 1u, pool.size())) {}

Status ParallelFor::run(size_t n_items, RangeFn fn, size_t min_chunk, size_t granule) const {
  if (n_items == 0) return {};
  granule = std::max<size_t>(granule, 1);
  // A part is at least min_chunk items, rounded up to whole granules.
  const size_t part_min = (std::max<size_t>(min_chunk, 1) + granule - 1) / granule * granule;
  const size_t parts = std::clamp<size_t>(n_items / part_min, 1, n_threads_);
  // One part wakes no worker: the caller runs it (through the pool, which catches what it throws).
  return pool_->run(static_cast<unsigned>(parts), [&](unsigned thread, unsigned n) {
    const IndexRange range = split_range(n_items, n, thread, granule);
    if (!range.empty()) fn(range.begin, range.end);
  });
}

Status ParallelFor::tasks(size_t n_tasks, TaskFn fn) const {
  if (n_tasks == 0) return {};
  return pool_->parallel_for(n_tasks, n_threads_, fn);
}

}  // namespace infertune
