#include "engine/threading/topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

namespace infertune {
namespace {

struct HwlocOwner {
  hwloc_topology_t handle = nullptr;
  ~HwlocOwner() {
    if (handle != nullptr) hwloc_topology_destroy(handle);
  }
  hwloc_topology_t release() { return std::exchange(handle, nullptr); }
};

Result<hwloc_topology_t> init_topology() {
  hwloc_topology_t handle = nullptr;
  if (hwloc_topology_init(&handle) != 0) return fail("hwloc: cannot initialise a topology: {}", std::strerror(errno));
  return handle;
}

std::string format_bytes(uint64_t bytes) {
  constexpr uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  if (bytes >= kGiB) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / kGiB);
  if (bytes >= kMiB && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  if (bytes >= kMiB) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / kMiB);
  if (bytes >= kKiB) return fmt::format("{} KiB", bytes / kKiB);
  return fmt::format("{} B", bytes);
}

std::string plural(unsigned n, const char* singular, const char* plural_form) {
  return fmt::format("{} {}", n, n == 1 ? singular : plural_form);
}

}  // namespace

CpuSet cpu_set_from_bitmap(hwloc_const_bitmap_t bitmap) {
  std::vector<unsigned> cpus;
  if (bitmap == nullptr || hwloc_bitmap_weight(bitmap) < 0) return CpuSet();  // empty or infinite: not a real set
  for (int index = hwloc_bitmap_first(bitmap); index >= 0; index = hwloc_bitmap_next(bitmap, index)) {
    cpus.push_back(static_cast<unsigned>(index));
  }
  return CpuSet(std::move(cpus));
}

UniqueBitmap bitmap_from_cpu_set(const CpuSet& cpus) {
  UniqueBitmap bitmap(hwloc_bitmap_alloc());
  if (bitmap) {
    for (unsigned cpu : cpus.cpus()) hwloc_bitmap_set(bitmap.get(), cpu);
  }
  return bitmap;
}

Topology::Topology(hwloc_topology_t handle) : handle_(handle) {}

Topology::Topology(Topology&& other) noexcept { *this = std::move(other); }

Topology& Topology::operator=(Topology&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) hwloc_topology_destroy(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    is_this_system_ = other.is_this_system_;
    pus_ = std::move(other.pus_);
    numa_nodes_ = std::move(other.numa_nodes_);
    caches_ = std::move(other.caches_);
    n_packages_ = other.n_packages_;
    n_cores_ = other.n_cores_;
  }
  return *this;
}

Topology::~Topology() {
  if (handle_ != nullptr) hwloc_topology_destroy(handle_);
}

Result<Topology> Topology::load_machine() {
  auto handle = init_topology();
  if (!handle) return handle.error();
  return finish_load(*handle, "this machine");
}

Result<Topology> Topology::load_synthetic(std::string_view description) {
  auto handle = init_topology();
  if (!handle) return handle.error();
  HwlocOwner owner{*handle};
  const std::string text(description);
  if (hwloc_topology_set_synthetic(owner.handle, text.c_str()) != 0) {
    return fail("synthetic topology '{}': hwloc cannot parse it", text);
  }
  return finish_load(owner.release(), fmt::format("synthetic topology '{}'", text));
}

Result<Topology> Topology::load_xml(std::string_view xml) {
  auto handle = init_topology();
  if (!handle) return handle.error();
  HwlocOwner owner{*handle};
  const std::string text(xml);
  // hwloc counts the terminating NUL in the buffer length.
  if (hwloc_topology_set_xmlbuffer(owner.handle, text.c_str(), static_cast<int>(text.size() + 1)) != 0) {
    return fail("hwloc XML topology ({} bytes): hwloc cannot read it", text.size());
  }
  return finish_load(owner.release(), "hwloc XML topology");
}

Result<Topology> Topology::finish_load(hwloc_topology_t handle, const std::string& what) {
  HwlocOwner owner{handle};
  if (hwloc_topology_load(handle) != 0) return fail("{}: hwloc cannot load it: {}", what, std::strerror(errno));
  Topology topology(owner.release());
  topology.is_this_system_ = hwloc_topology_is_thissystem(topology.handle_) != 0;
  if (Status s = topology.snapshot(); !s) return fail("{}: {}", what, s.error().message);
  return topology;
}

// Copies what placement needs out of hwloc. Cores and packages get dense indices in logical order; a PU
// with no Core above it (some synthetic or exotic topologies) counts as a core of its own.
Status Topology::snapshot() {
  const int n_nodes = hwloc_get_nbobjs_by_type(handle_, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n_nodes; ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(handle_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    numa_nodes_.push_back({node->os_index, node->attr->numanode.local_memory, cpu_set_from_bitmap(node->cpuset)});
  }
  std::map<hwloc_obj_t, unsigned> core_ids, package_ids;
  std::vector<unsigned> pus_per_core;
  const int n_pus = hwloc_get_nbobjs_by_type(handle_, HWLOC_OBJ_PU);
  for (int i = 0; i < n_pus; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(handle_, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(handle_, HWLOC_OBJ_CORE, pu);
    hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(handle_, HWLOC_OBJ_PACKAGE, pu);
    PuInfo info;
    info.os_index = pu->os_index;
    info.core = core_ids.try_emplace(core != nullptr ? core : pu, static_cast<unsigned>(core_ids.size())).first->second;
    info.package = package_ids.try_emplace(package, static_cast<unsigned>(package_ids.size())).first->second;
    if (info.core >= pus_per_core.size()) pus_per_core.resize(info.core + 1, 0);
    info.smt_rank = pus_per_core[info.core]++;
    info.numa_node = numa_nodes_.empty() ? 0 : numa_nodes_.front().os_index;
    for (const NumaNodeInfo& node : numa_nodes_) {
      if (node.cpus.contains(info.os_index)) {
        info.numa_node = node.os_index;
        break;
      }
    }
    pus_.push_back(info);
  }
  if (pus_.empty()) return fail("no processing unit (PU) found");
  if (numa_nodes_.empty()) return fail("no NUMA node found");
  n_cores_ = static_cast<unsigned>(core_ids.size());
  n_packages_ = static_cast<unsigned>(package_ids.size());
  for (hwloc_obj_type_t type : {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE}) {
    const int n = hwloc_get_nbobjs_by_type(handle_, type);
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t cache = hwloc_get_obj_by_type(handle_, type, static_cast<unsigned>(i));
      if (cache->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION) continue;
      caches_.push_back({cache->attr->cache.depth, cache->attr->cache.size, cpu_set_from_bitmap(cache->cpuset)});
    }
  }
  return {};
}

CpuSet Topology::all_cpus() const {
  std::vector<unsigned> cpus;
  for (const PuInfo& pu : pus_) cpus.push_back(pu.os_index);
  return CpuSet(std::move(cpus));
}

const PuInfo* Topology::find_pu(unsigned os_index) const {
  for (const PuInfo& pu : pus_) {
    if (pu.os_index == os_index) return &pu;
  }
  return nullptr;
}

uint64_t Topology::cache_bytes(unsigned level) const {
  uint64_t bytes = 0;
  for (const CacheInfo& cache : caches_) {
    if (cache.level == level) bytes = std::max(bytes, cache.bytes);
  }
  return bytes;
}

std::string Topology::summary() const {
  uint64_t memory = 0;
  for (const NumaNodeInfo& node : numa_nodes_) memory += node.memory_bytes;
  std::string out = fmt::format("{}, {}, {}, {}", plural(n_packages_, "package", "packages"),
                                plural(n_cores_, "core", "cores"), plural(n_pus(), "PU", "PUs"),
                                plural(static_cast<unsigned>(numa_nodes_.size()), "NUMA node", "NUMA nodes"));
  if (memory > 0) out += fmt::format(" ({})", format_bytes(memory));
  for (unsigned level : {2u, 3u}) {
    const auto count =
        std::count_if(caches_.begin(), caches_.end(), [&](const CacheInfo& c) { return c.level == level; });
    if (count > 0) out += fmt::format(", L{} {} x{}", level, format_bytes(cache_bytes(level)), count);
  }
  return out;
}

Result<std::string> Topology::export_xml() const {
  char* buffer = nullptr;
  int length = 0;
  if (hwloc_topology_export_xmlbuffer(handle_, &buffer, &length, 0) != 0 || buffer == nullptr) {
    return fail("hwloc cannot export the topology as XML");
  }
  std::string xml(buffer, length > 0 ? static_cast<size_t>(length - 1) : 0);  // length counts the NUL
  hwloc_free_xmlbuffer(handle_, buffer);
  return xml;
}

}  // namespace infertune
