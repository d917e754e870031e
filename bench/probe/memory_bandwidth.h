#pragma once
// Measured DRAM bandwidth: a streaming read of a buffer far larger than the last-level cache, with one
// thread per physical core and with one core, plus STREAM's triad with all cores. Rates are in GB/s
// (1e9 bytes per second). The all-core read is the best of every access shape of the widest read kernel
// (one stream; 4 and 8 prefetched streams: stream_kernels.h), and the one-core read uses the winner. The
// buffer keeps 4 KiB pages (large_buffer.h): advising it for transparent huge pages made the first touch
// of 1 GiB take 20 s instead of 4 s on the 2-core CI VM under load (THP defrag "madvise"), and the model
// weights a decode reads are page-cache pages of 4 KiB too.
#include <cstdint>
#include <string>
#include <vector>

#include "bench/probe/host_info.h"
#include "bench/probe/rate.h"
#include "kernels/result.h"

namespace infertune {

struct BandwidthFigures {
  std::string read_isa;       // the read kernel's variant
  uint64_t buffer_bytes = 0;  // bytes read per repetition
  Rate read_all_cores;        // GB/s
  Rate read_one_core;         // GB/s
  Rate triad_all_cores;       // GB/s, STREAM's byte count
  bool operator==(const BandwidthFigures&) const = default;
};

struct BandwidthPlan {
  uint64_t buffer_bytes = 0;
  unsigned read_repetitions = 8;
  unsigned triad_repetitions = 5;
};

// max(1 GiB, 8 x the last-level cache of the whole host), at most a quarter of RAM; a multiple of 2 MiB.
uint64_t bandwidth_buffer_bytes(const HostInfo& host);

// core_cpus: one OS CPU per physical core (HostTopology::core_cpus); the one-core figure uses the first.
// Each buffer is first touched by the threads that read it. Errors when memory cannot be mapped, a thread
// cannot start, or a kernel's answer is wrong.
Result<BandwidthFigures> measure_memory_bandwidth(const std::vector<int>& core_cpus, size_t numa_nodes,
                                                  const BandwidthPlan& plan);

}  // namespace infertune
