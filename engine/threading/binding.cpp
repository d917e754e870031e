#include "engine/threading/binding.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace infertune {
namespace {

UniqueBitmap node_set(unsigned node) {
  UniqueBitmap bitmap(hwloc_bitmap_alloc());
  if (bitmap) hwloc_bitmap_only(bitmap.get(), node);
  return bitmap;
}

}  // namespace

std::optional<std::string> bind_current_thread_cpus(const Topology& topology, const CpuSet& cpus) {
  if (cpus.empty()) return std::nullopt;
  UniqueBitmap bitmap = bitmap_from_cpu_set(cpus);
  if (!bitmap) return "cannot bind a thread: out of memory";
  if (hwloc_set_cpubind(topology.handle(), bitmap.get(), HWLOC_CPUBIND_THREAD) != 0) {
    return fmt::format("cannot bind a thread to CPUs {}: {}", cpus.to_string(), std::strerror(errno));
  }
  return std::nullopt;
}

std::optional<std::string> bind_current_thread_memory(const Topology& topology, unsigned node) {
  if (topology.numa_nodes().size() <= 1) return std::nullopt;
  UniqueBitmap nodes = node_set(node);
  if (!nodes) return "cannot bind a thread's memory: out of memory";
  const int flags = HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET;
  if (hwloc_set_membind(topology.handle(), nodes.get(), HWLOC_MEMBIND_BIND, flags) != 0) {
    return fmt::format("cannot bind a thread's memory to NUMA node {}: {}", node, std::strerror(errno));
  }
  return std::nullopt;
}

std::vector<std::string> apply_placement_to_current_thread(const Topology& topology, const WorkerPlacement& placement) {
  std::vector<std::string> warnings;
  if (auto warning = bind_current_thread_cpus(topology, placement.cpus)) warnings.push_back(std::move(*warning));
  if (placement.numa_node) {
    if (auto warning = bind_current_thread_memory(topology, *placement.numa_node))
      warnings.push_back(std::move(*warning));
  }
  return warnings;
}

Result<CpuSet> current_thread_cpus(const Topology& topology) {
  UniqueBitmap bitmap(hwloc_bitmap_alloc());
  if (!bitmap) return fail("cannot read a thread's CPU binding: out of memory");
  if (hwloc_get_cpubind(topology.handle(), bitmap.get(), HWLOC_CPUBIND_THREAD) != 0) {
    return fail("cannot read a thread's CPU binding: {}", std::strerror(errno));
  }
  return cpu_set_from_bitmap(bitmap.get());
}

Result<NumaBuffer> NumaBuffer::allocate(const Topology& topology, size_t bytes, std::optional<unsigned> node) {
  if (bytes == 0) return NumaBuffer(&topology, nullptr, 0, false);
  if (node && topology.numa_nodes().size() > 1) {
    UniqueBitmap nodes = node_set(*node);
    if (nodes) {
      void* data =
          hwloc_alloc_membind(topology.handle(), bytes, nodes.get(), HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET);
      if (data != nullptr) return NumaBuffer(&topology, data, bytes, true);
    }
  }
  void* data = hwloc_alloc(topology.handle(), bytes);
  if (data == nullptr) return fail("cannot allocate {} bytes: {}", bytes, std::strerror(errno));
  // On a one-node machine every page is on the requested node anyway.
  return NumaBuffer(&topology, data, bytes, node.has_value() && topology.numa_nodes().size() == 1);
}

NumaBuffer::NumaBuffer(NumaBuffer&& other) noexcept { *this = std::move(other); }

NumaBuffer& NumaBuffer::operator=(NumaBuffer&& other) noexcept {
  if (this != &other) {
    release();
    topology_ = std::exchange(other.topology_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    bound_ = std::exchange(other.bound_, false);
  }
  return *this;
}

NumaBuffer::~NumaBuffer() { release(); }

void NumaBuffer::release() {
  if (data_ != nullptr) hwloc_free(topology_->handle(), data_, bytes_);
  data_ = nullptr;
}

}  // namespace infertune
