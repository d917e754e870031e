#include "engine/context/parallel_for.h"

#include <algorithm>
#include <system_error>
#include <thread>
#include <vector>

namespace infertune {

void ParallelFor::run(size_t n_items, const std::function<void(size_t, size_t)>& fn, size_t min_chunk) const {
  if (n_items == 0) return;
  const size_t max_chunks = std::max<size_t>(1, n_items / std::max<size_t>(1, min_chunk));
  const size_t n_chunks = std::min<size_t>(n_threads_, max_chunks);
  if (n_chunks == 1) {
    fn(0, n_items);
    return;
  }
  // Chunk c covers [c * n / k, (c + 1) * n / k): sizes differ by at most one item.
  auto bounds = [&](size_t c) { return c * n_items / n_chunks; };
  std::vector<std::thread> workers;
  workers.reserve(n_chunks - 1);
  for (size_t c = 1; c < n_chunks; ++c) {
    try {
      workers.emplace_back(fn, bounds(c), bounds(c + 1));
    } catch (const std::system_error&) {
      fn(bounds(c), bounds(c + 1));
    }
  }
  fn(bounds(0), bounds(1));
  for (std::thread& worker : workers) worker.join();
}

}  // namespace infertune
