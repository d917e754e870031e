#include "engine/threading/first_touch.h"

#include <cstring>

#include "engine/threading/static_split.h"

namespace infertune {

Status first_touch(ThreadPool& pool, void* data, size_t bytes, unsigned n_threads, size_t granule) {
  if (bytes == 0) return {};
  auto* base = static_cast<unsigned char*>(data);
  return pool.run(n_threads, [&](unsigned thread, unsigned n) {
    const IndexRange share = split_range(bytes, n, thread, granule);
    if (!share.empty()) std::memset(base + share.begin, 0, share.size());
  });
}

}  // namespace infertune
