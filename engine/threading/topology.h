#pragma once
// The machine's processing units, cores, packages, caches and NUMA nodes as hwloc sees them, loaded from
// the running machine, from an hwloc synthetic description ("pack:2 [numa(memory=16GB)] l3:1 core:4 pu:2")
// or from hwloc XML -- the latter two let placement be tested without NUMA hardware.
//
// Everything placement needs is copied out of hwloc once, at load, into plain vectors (pus(), cores,
// numa_nodes(), caches()); the hwloc handle stays alive for binding (engine/threading/binding.h).
// Only the PUs hwloc reports as allowed (cgroup cpuset) are included.
#include <hwloc.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/threading/cpu_set.h"
#include "kernels/result.h"

namespace infertune {

// One hardware thread.
struct PuInfo {
  unsigned os_index = 0;   // the OS's CPU number (-C masks, taskset, sched_getcpu)
  unsigned core = 0;       // dense index of its physical core, in hwloc's logical order
  unsigned package = 0;    // dense index of its package (socket)
  unsigned numa_node = 0;  // OS index of its (first) local NUMA node
  unsigned smt_rank = 0;   // 0 for the first PU of its core, 1 for its first SMT sibling, ...
};

struct NumaNodeInfo {
  unsigned os_index = 0;
  uint64_t memory_bytes = 0;  // local memory (0 when hwloc does not know, as in a synthetic topology without sizes)
  CpuSet cpus;                // PUs local to it; empty for a memory-only node
};

struct CacheInfo {
  unsigned level = 0;  // 1, 2, 3 (data / unified caches only)
  uint64_t bytes = 0;
  CpuSet cpus;  // the PUs that share this instance
};

class Topology {
 public:
  static Result<Topology> load_machine();
  static Result<Topology> load_synthetic(std::string_view description);
  static Result<Topology> load_xml(std::string_view xml);

  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  ~Topology();

  // True only for load_machine(): binding a synthetic or XML topology is a successful no-op in hwloc.
  bool is_this_system() const { return is_this_system_; }

  const std::vector<PuInfo>& pus() const { return pus_; }  // hwloc logical order (by core, siblings adjacent)
  const std::vector<NumaNodeInfo>& numa_nodes() const { return numa_nodes_; }
  const std::vector<CacheInfo>& caches() const { return caches_; }
  unsigned n_packages() const { return n_packages_; }
  unsigned n_cores() const { return n_cores_; }
  unsigned n_pus() const { return static_cast<unsigned>(pus_.size()); }

  CpuSet all_cpus() const;
  const PuInfo* find_pu(unsigned os_index) const;  // nullptr when the CPU is not in this topology
  // Size of one instance of the level's cache (0 when absent); the largest when instances differ.
  uint64_t cache_bytes(unsigned level) const;

  // "1 package, 2 cores, 2 PUs, 1 NUMA node (12.5 GiB), L2 1 MiB x2, L3 32 MiB x1"
  std::string summary() const;
  // The hwloc XML of this topology (to save a machine's layout for a test, or for the hosts table).
  Result<std::string> export_xml() const;

  hwloc_topology_t handle() const { return handle_; }

 private:
  explicit Topology(hwloc_topology_t handle);
  static Result<Topology> finish_load(hwloc_topology_t handle, const std::string& what);
  Status snapshot();

  hwloc_topology_t handle_ = nullptr;
  bool is_this_system_ = false;
  std::vector<PuInfo> pus_;
  std::vector<NumaNodeInfo> numa_nodes_;
  std::vector<CacheInfo> caches_;
  unsigned n_packages_ = 0;
  unsigned n_cores_ = 0;
};

// hwloc bitmap <-> CpuSet (indices are OS indices either way).
CpuSet cpu_set_from_bitmap(hwloc_const_bitmap_t bitmap);
// The caller owns the bitmap (hwloc_bitmap_free); a unique_ptr with this deleter does it.
struct BitmapDeleter {
  void operator()(hwloc_bitmap_t bitmap) const { hwloc_bitmap_free(bitmap); }
};
using UniqueBitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;
UniqueBitmap bitmap_from_cpu_set(const CpuSet& cpus);

}  // namespace infertune
