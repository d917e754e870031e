#pragma once
// What a host is, as opposed to what it measures: CPU identity and ISA, cores and hardware threads, caches,
// NUMA nodes and their memory (hwloc), total RAM, OS, GPUs. The probe reports it and fingerprints it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/result.h"

namespace infertune {

// One kind of cache: every instance of `level` with the same size (hybrid CPUs have two L2 kinds).
struct HostCache {
  std::string level;        // "L1d", "L2", "L3", "L4"
  uint64_t size_bytes = 0;  // of one instance
  unsigned count = 0;       // instances
  bool operator==(const HostCache&) const = default;
};

struct HostNumaNode {
  unsigned os_index = 0;
  uint64_t memory_bytes = 0;  // local memory the OS reports for the node
  std::string cpus;           // OS CPU numbers as a list, "0-15,32-47"
  bool operator==(const HostNumaNode&) const = default;
};

struct OsInfo {
  std::string name;     // uname sysname, "Linux"
  std::string release;  // kernel release
  std::string version;
  std::string machine;  // "x86_64"
  bool operator==(const OsInfo&) const = default;
};

struct GpuInfo {
  int index = 0;  // CUDA's
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  uint64_t memory_bytes = 0;
  std::string pci_bus_id{};  // "0000:65:00.0"
  // The memory interface as NVML reports it (kernels/cuda/nvml.h); 0 and null where NVML is absent.
  unsigned memory_bus_width_bits = 0;
  unsigned max_memory_clock_mhz = 0;
  std::optional<double> theoretical_bandwidth_gbs{};  // 2 x max memory clock x bus width / 8
  bool operator==(const GpuInfo&) const = default;
};

struct HostInfo {
  std::string cpu_vendor;
  std::string cpu_model;
  std::vector<std::string> cpu_features;  // CpuFeatures::names(), fixed order
  unsigned packages = 0;
  unsigned physical_cores = 0;    // that this process may run on
  unsigned hardware_threads = 0;  // ditto
  std::vector<HostCache> caches;  // L1d first, then by level
  std::vector<HostNumaNode> numa_nodes;
  uint64_t memory_bytes = 0;  // total RAM (sysconf), which may exceed the NUMA nodes' sum in a VM
  OsInfo os;
  std::vector<GpuInfo> gpus;
  bool operator==(const HostInfo&) const = default;
};

// A host description plus where measurement threads go: the first OS CPU of each physical core, in
// topology order (cores of one package and node are adjacent).
struct HostTopology {
  HostInfo info;
  std::vector<int> core_cpus;  // [physical_cores]
};

// Reads the live host (hwloc topology, uname, sysconf, CPUID, the CUDA runtime, NVML). Errors only when hwloc
// cannot load a topology.
Result<HostTopology> read_host_topology();

}  // namespace infertune
