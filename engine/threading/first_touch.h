#pragma once
// First touch: Linux places a page on the NUMA node of the thread that first writes it. Zeroing a buffer
// from the pool, each thread writing the pages of its static share, puts each share on its thread's node
// -- the share the same thread later reads when work is split the same way (split_range over the same
// n_threads and granule).
#include <cstddef>

#include "engine/threading/thread_pool.h"
#include "kernels/result.h"

namespace infertune {

// Zeroes [data, data + bytes) with n_threads threads of `pool`, thread t writing split_range(bytes,
// n_threads, t, granule). granule: the unit work is split in (bytes of a row block, say; 4096 at least
// keeps pages whole).
Status first_touch(ThreadPool& pool, void* data, size_t bytes, unsigned n_threads, size_t granule = 4096);

}  // namespace infertune
