#include "bench/probe/memory_bandwidth.h"

#include <algorithm>
#include <optional>

#include "bench/probe/large_buffer.h"
#include "bench/probe/pinned_threads.h"
#include "bench/probe/stream_kernels.h"

namespace infertune {
namespace {

constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kHugePage = 2ull << 20;
constexpr size_t kPageWords = 4096 / sizeof(uint64_t);

// Thread t's share of n words: whole 4 KiB pages, so first touch places every page where it is read.
struct Chunk {
  size_t begin = 0, end = 0;
};
Chunk chunk_of(size_t n_words, unsigned threads, unsigned t) {
  const size_t pages = n_words / kPageWords;
  const auto bound = [&](unsigned i) { return i == threads ? n_words : pages * i / threads * kPageWords; };
  return {bound(t), bound(t + 1)};
}

// The buffer holds word i == i, so the sum of words [b, e) is known in closed form (mod 2^64).
uint64_t index_sum(size_t b, size_t e) {
  const unsigned __int128 n = e - b, first = b, last = e - 1;
  return e > b ? static_cast<uint64_t>(n * (first + last) / 2) : 0;
}

void fill_with_indices(uint64_t* words, Chunk c) {
  for (size_t i = c.begin; i < c.end; ++i) words[i] = i;
}

// Read bandwidth with one thread per cpu; the buffer must already hold word i == i unless `fill`.
Result<Rate> measure_read(const LargeBuffer& buffer, const std::vector<int>& cpus, bool fill, unsigned reps,
                          ReadSumFn sum) {
  const size_t n = buffer.bytes() / sizeof(uint64_t);
  const auto threads = static_cast<unsigned>(cpus.size());
  std::vector<uint64_t> sums(threads, 0);
  auto seconds = PinnedThreads(cpus).run(
      [&](unsigned t) {
        if (fill) fill_with_indices(buffer.words(), chunk_of(n, threads, t));
      },
      [&](unsigned t, unsigned) {
        const Chunk c = chunk_of(n, threads, t);
        sums[t] = sum(buffer.words() + c.begin, c.end - c.begin);
      },
      reps);
  if (!seconds) return seconds.error();
  uint64_t total = 0;
  for (uint64_t s : sums) total += s;
  if (total != index_sum(0, n)) return fail("the read kernel summed {} words wrongly ({:#x})", n, total);
  return summarize_rate(static_cast<double>(buffer.bytes()) / 1e9, *seconds, threads);
}

// STREAM triad inside each thread's own chunk (a, b, c are its thirds), so the pages stay local.
Result<Rate> measure_triad(const LargeBuffer& buffer, const std::vector<int>& cpus, unsigned reps) {
  const size_t n = buffer.bytes() / sizeof(uint64_t);
  const auto threads = static_cast<unsigned>(cpus.size());
  auto* base = reinterpret_cast<double*>(buffer.words());
  constexpr double kScalar = 3.0, kB = 1.0, kC = 2.0;  // normal numbers: denormals would be compute-bound
  const auto thirds = [&](unsigned t) {
    const Chunk c = chunk_of(n, threads, t);
    return std::pair{base + c.begin, (c.end - c.begin) / 3};
  };
  auto seconds = PinnedThreads(cpus).run(
      [&](unsigned t) {
        auto [a, len] = thirds(t);
        std::fill(a + len, a + 2 * len, kB);
        std::fill(a + 2 * len, a + 3 * len, kC);
      },
      [&](unsigned t, unsigned) {
        auto [a, len] = thirds(t);
        stream_triad(a, a + len, a + 2 * len, kScalar, len);
      },
      reps);
  if (!seconds) return seconds.error();
  double moved = 0;
  for (unsigned t = 0; t < threads; ++t) {
    auto [a, len] = thirds(t);
    if (len && (a[0] != kB + kScalar * kC || a[len - 1] != kB + kScalar * kC)) {
      return fail("the triad kernel wrote a wrong value ({})", a[0]);
    }
    moved += 3.0 * sizeof(double) * static_cast<double>(len);
  }
  return summarize_rate(moved / 1e9, *seconds, threads);
}

// The all-core read with each access shape of the widest ISA (stream_kernels.h), the buffer filled by the
// first; returns the fastest shape's rate and kernel, so the figure is the host's peak rather than one
// shape's (a decode must not beat it).
struct BestRead {
  Rate rate;
  ReadSumKernel kernel;
};
Result<BestRead> measure_best_read(const LargeBuffer& buffer, const std::vector<int>& cpus, unsigned reps) {
  const std::vector<ReadSumKernel> kernels = available_read_sum_kernels();
  std::optional<BestRead> best;
  for (const ReadSumKernel& kernel : kernels) {
    if (kernel.isa != kernels.front().isa) break;  // the widest ISA's shapes come first
    auto rate = measure_read(buffer, cpus, /*fill=*/!best, reps, kernel.sum);
    if (!rate) return rate.error();
    if (!best || rate->best > best->rate.best) best = BestRead{*rate, kernel};
  }
  return *best;
}

}  // namespace

uint64_t bandwidth_buffer_bytes(const HostInfo& host) {
  uint64_t llc = 0;
  if (!host.caches.empty()) {
    const std::string& last_level = host.caches.back().level;
    for (const auto& c : host.caches) {
      if (c.level == last_level) llc += c.size_bytes * c.count;
    }
  }
  uint64_t bytes = std::max(kGiB, 8 * llc);
  if (host.memory_bytes) bytes = std::min(bytes, host.memory_bytes / 4);
  return std::max(kHugePage, bytes / kHugePage * kHugePage);
}

Result<BandwidthFigures> measure_memory_bandwidth(const std::vector<int>& core_cpus, size_t numa_nodes,
                                                  const BandwidthPlan& plan) {
  if (core_cpus.empty()) return fail("no cores to measure bandwidth on");
  BandwidthFigures out;

  const std::vector<int> one_core = {core_cpus.front()};
  // With one NUMA node every page is local to every core, so the one-core read reuses the buffer; with
  // several it gets a buffer of its own that its core touches first, mapped once the first is freed.
  const bool shared_buffer = numa_nodes <= 1;
  Result<Rate> one = Rate{};
  ReadSumKernel kernel;
  {
    auto buffer = LargeBuffer::map(plan.buffer_bytes);
    if (!buffer) return buffer.error();
    out.buffer_bytes = buffer->bytes();
    auto all = measure_best_read(*buffer, core_cpus, plan.read_repetitions);
    if (!all) return all.error();
    out.read_all_cores = all->rate;
    kernel = all->kernel;
    out.read_isa = std::string(kernel.isa);
    // One core reads with the shape that won on all of them: the two figures stay comparable.
    if (shared_buffer) one = measure_read(*buffer, one_core, /*fill=*/false, plan.read_repetitions, kernel.sum);
    if (!one) return one.error();
    auto triad = measure_triad(*buffer, core_cpus, plan.triad_repetitions);  // overwrites the indices
    if (!triad) return triad.error();
    out.triad_all_cores = *triad;
  }
  if (!shared_buffer) {
    auto own = LargeBuffer::map(plan.buffer_bytes);
    if (!own) return own.error();
    one = measure_read(*own, one_core, /*fill=*/true, plan.read_repetitions, kernel.sum);
    if (!one) return one.error();
  }
  out.read_one_core = *one;
  return out;
}

}  // namespace infertune
