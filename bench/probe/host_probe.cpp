#include "bench/probe/host_probe.h"

#include <chrono>

#include "bench/probe/host_fingerprint.h"

namespace infertune {

Result<HostProbe> measure_host_probe(const HostTopology& topology) {
  const auto start = std::chrono::steady_clock::now();
  HostProbe probe;
  probe.host = topology.info;
  probe.fingerprint = host_fingerprint(topology.info);
  probe.measured_at_unix =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();

  BandwidthPlan bandwidth_plan;
  bandwidth_plan.buffer_bytes = bandwidth_buffer_bytes(topology.info);
  auto bandwidth = measure_memory_bandwidth(topology.core_cpus, topology.info.numa_nodes.size(), bandwidth_plan);
  if (!bandwidth) return fail("measuring memory bandwidth: {}", bandwidth.error().message);
  probe.bandwidth = *bandwidth;

  auto compute = measure_compute_peak(topology.core_cpus, ComputePlan{});
  if (!compute) return fail("measuring compute peak: {}", compute.error().message);
  probe.compute = *compute;
  probe.gpus = measure_gpu_peaks(topology.info.gpus, GpuPlan{});

  probe.measure_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return probe;
}

}  // namespace infertune
