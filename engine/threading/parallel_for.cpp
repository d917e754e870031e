#include "engine/threading/parallel_for.h"

#include <algorithm>
#include <atomic>

#include "engine/threading/static_split.h"

namespace infertune {
namespace {

// run_balanced's chunks per thread.
constexpr size_t kChunksPerThread = 16;

// The smallest part: min_chunk items rounded up to whole granules.
size_t part_min(size_t min_chunk, size_t granule) {
  return (std::max<size_t>(min_chunk, 1) + granule - 1) / granule * granule;
}

}  // namespace

unsigned ParallelFor::threads_for(size_t n_items, size_t min_chunk, size_t granule) const {
  const size_t parts = n_items / part_min(min_chunk, std::max<size_t>(granule, 1));
  return static_cast<unsigned>(std::clamp<size_t>(parts, 1, n_threads_));
}

ParallelFor::ParallelFor(ThreadPool& pool, unsigned n_threads)
    : pool_(&pool), n_threads_(std::clamp(n_threads, 1u, pool.size())) {}

Status ParallelFor::run(size_t n_items, RangeFn fn, size_t min_chunk, size_t granule) const {
  if (n_items == 0) return {};
  granule = std::max<size_t>(granule, 1);
  // One part wakes no worker: the caller runs it (through the pool, which catches what it throws).
  return pool_->run(threads_for(n_items, min_chunk, granule), [&](unsigned thread, unsigned n) {
    const IndexRange range = split_range(n_items, n, thread, granule);
    if (!range.empty()) fn(range.begin, range.end);
  });
}

Status ParallelFor::run_balanced(size_t n_items, RangeFn fn, size_t min_chunk, size_t granule) const {
  if (n_items == 0) return {};
  granule = std::max<size_t>(granule, 1);
  const unsigned parts = threads_for(n_items, min_chunk, granule);
  if (parts == 1) return run(n_items, fn, min_chunk, granule);
  // Enough chunks that the last one to finish leaves the others a small wait, few enough that taking one
  // (an atomic add, and a restart of the kernel's prefetch) costs nothing measurable.
  const size_t target = (n_items + parts * kChunksPerThread - 1) / (parts * kChunksPerThread);
  const size_t chunk = std::max(part_min(min_chunk, granule), (target + granule - 1) / granule * granule);
  alignas(64) std::atomic<size_t> next{0};
  return pool_->run(parts, [&](unsigned, unsigned) {
    for (size_t begin = next.fetch_add(chunk, std::memory_order_relaxed); begin < n_items;
         begin = next.fetch_add(chunk, std::memory_order_relaxed)) {
      fn(begin, std::min(n_items, begin + chunk));
    }
  });
}

Status ParallelFor::tasks(size_t n_tasks, TaskFn fn) const {
  if (n_tasks == 0) return {};
  return pool_->parallel_for(n_tasks, n_threads_, fn);
}

}  // namespace infertune
