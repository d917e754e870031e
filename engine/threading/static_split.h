#pragma once
// The static split matmul and friends use: [0, n_items) cut into n_parts contiguous ranges, in order,
// whose sizes differ by at most one granule (the first n % k parts get the extra one). With a granule (a
// quantization block of rows, say) every boundary falls on a multiple of it, except the end, n_items.
// A part with no items left gets an empty range at n_items. Exact while n_items + granule fits in size_t.
#include <algorithm>
#include <cstddef>

namespace infertune {

struct IndexRange {
  size_t begin = 0;
  size_t end = 0;
  size_t size() const { return end - begin; }
  bool empty() const { return begin == end; }
  friend bool operator==(const IndexRange&, const IndexRange&) = default;
};

// part in [0, n_parts); n_parts >= 1; granule >= 1.
inline IndexRange split_range(size_t n_items, size_t n_parts, size_t part, size_t granule = 1) {
  if (n_parts == 0 || part >= n_parts) return {n_items, n_items};
  granule = std::max<size_t>(granule, 1);
  const size_t n_granules = n_items / granule + (n_items % granule != 0 ? 1 : 0);
  const size_t base = n_granules / n_parts;
  const size_t extra = n_granules % n_parts;
  const size_t first = part * base + std::min(part, extra);
  const size_t count = base + (part < extra ? 1 : 0);
  // Only the last granule can reach past n_items.
  const size_t begin = std::min(n_items, first * granule);
  const size_t end = std::min(n_items, (first + count) * granule);
  return {begin, end};
}

}  // namespace infertune
