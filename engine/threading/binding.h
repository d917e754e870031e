#pragma once
// Applying a WorkerPlacement to the calling thread with hwloc, and memory bound to a NUMA node.
//
// Failures to bind are warnings, not errors: an unbound thread computes the same result, only perhaps
// slower, and containers often refuse affinity or memory-policy calls. On a topology with a single NUMA
// node memory binding is skipped (there is nothing to choose), so it is a no-op there. Binding through a
// synthetic or XML topology is a successful no-op (hwloc only binds through the running machine's).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "engine/threading/cpu_set.h"
#include "engine/threading/placement.h"
#include "engine/threading/topology.h"
#include "kernels/result.h"

namespace infertune {

// hwloc_set_cpubind(HWLOC_CPUBIND_THREAD); a warning on failure. An empty set leaves the thread as it is.
std::optional<std::string> bind_current_thread_cpus(const Topology& topology, const CpuSet& cpus);

// Binds the calling thread's future allocations (page faults it takes first) to `node`
// (hwloc_set_membind, HWLOC_MEMBIND_BIND, per thread); a warning on failure; skipped on one-node machines.
std::optional<std::string> bind_current_thread_memory(const Topology& topology, unsigned node);

// Both of the above, as the placement says; returns the warnings.
std::vector<std::string> apply_placement_to_current_thread(const Topology& topology, const WorkerPlacement& placement);

// Where the calling thread may run now (hwloc_get_cpubind, HWLOC_CPUBIND_THREAD).
Result<CpuSet> current_thread_cpus(const Topology& topology);

// A page-aligned buffer whose pages live on one NUMA node (hwloc_alloc_membind). Falls back to an unbound
// allocation when the OS refuses the binding (bound() says which). Move-only; freed with hwloc_free.
class NumaBuffer {
 public:
  // node: OS index; nullopt or a one-node machine: an ordinary page-aligned allocation.
  static Result<NumaBuffer> allocate(const Topology& topology, size_t bytes, std::optional<unsigned> node);

  NumaBuffer(NumaBuffer&& other) noexcept;
  NumaBuffer& operator=(NumaBuffer&& other) noexcept;
  ~NumaBuffer();

  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  bool bound() const { return bound_; }

 private:
  NumaBuffer(const Topology* topology, void* data, size_t bytes, bool bound)
      : topology_(topology), data_(data), bytes_(bytes), bound_(bound) {}
  void release();

  const Topology* topology_ = nullptr;  // must outlive the buffer
  void* data_ = nullptr;
  size_t bytes_ = 0;
  bool bound_ = false;
};

}  // namespace infertune
