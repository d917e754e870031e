#pragma once
// The host probe: what the host is (host_info.h) and what it measures — DRAM bandwidth and arithmetic
// peaks, and each GPU's memory bandwidth and f16 GEMM peak: the roofline figures bench and sweep compare
// achieved throughput against. Cached per host (probe_cache.h); serialized by probe_json.h.
#include <cstdint>
#include <string>
#include <vector>

#include "bench/probe/compute_peak.h"
#include "bench/probe/gpu_peak.h"
#include "bench/probe/host_info.h"
#include "bench/probe/memory_bandwidth.h"
#include "kernels/result.h"

namespace infertune {

struct HostProbe {
  std::string fingerprint;       // host_fingerprint(host) when measured
  int64_t measured_at_unix = 0;  // seconds since the epoch, UTC
  double measure_seconds = 0;    // how long the measurement took
  HostInfo host;
  BandwidthFigures bandwidth;
  ComputeFigures compute;
  std::vector<GpuFigures> gpus;  // one per host.gpus, in its order
  bool operator==(const HostProbe&) const = default;
};

// Measures the host described by `topology` now (a few seconds).
Result<HostProbe> measure_host_probe(const HostTopology& topology);

}  // namespace infertune
