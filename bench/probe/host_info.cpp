#include "bench/probe/host_info.h"

#include <hwloc.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "kernels/cpu_features.h"
#include "kernels/cuda/cuda_devices.h"
#include "kernels/cuda/nvml.h"

namespace infertune {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* topology) const { hwloc_topology_destroy(topology); }
};
using Topology = std::unique_ptr<hwloc_topology, TopologyDeleter>;

Result<Topology> load_topology() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return fail("hwloc: cannot initialise a topology");
  Topology topology(raw);
  if (hwloc_topology_load(raw) != 0) return fail("hwloc: cannot load the host topology");
  return topology;
}

unsigned count_of(hwloc_topology_t topology, hwloc_obj_type_t type) {
  const int n = hwloc_get_nbobjs_by_type(topology, type);
  return n > 0 ? static_cast<unsigned>(n) : 0;
}

std::string cpu_list(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || !text) return {};
  std::string out(text);
  std::free(text);
  return out;
}

// Groups the instances of each cache level by size; levels the host lacks are left out.
std::vector<HostCache> read_caches(hwloc_topology_t topology) {
  const std::pair<hwloc_obj_type_t, const char*> levels[] = {
      {HWLOC_OBJ_L1CACHE, "L1d"}, {HWLOC_OBJ_L2CACHE, "L2"}, {HWLOC_OBJ_L3CACHE, "L3"}, {HWLOC_OBJ_L4CACHE, "L4"}};
  std::vector<HostCache> caches;
  for (const auto& [type, name] : levels) {
    const size_t first_of_level = caches.size();
    for (unsigned i = 0; i < count_of(topology, type); ++i) {
      const hwloc_obj_t obj = hwloc_get_obj_by_type(topology, type, i);
      if (obj->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION) continue;
      const uint64_t size = obj->attr->cache.size;
      bool counted = false;
      for (size_t k = first_of_level; k < caches.size(); ++k) {
        if (caches[k].size_bytes == size) {
          ++caches[k].count;
          counted = true;
          break;
        }
      }
      if (!counted) caches.push_back({name, size, 1});
    }
  }
  return caches;
}

std::vector<HostNumaNode> read_numa_nodes(hwloc_topology_t topology) {
  std::vector<HostNumaNode> nodes;
  for (unsigned i = 0; i < count_of(topology, HWLOC_OBJ_NUMANODE); ++i) {
    const hwloc_obj_t obj = hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, i);
    nodes.push_back({obj->os_index, obj->attr->numanode.local_memory, cpu_list(obj->cpuset)});
  }
  return nodes;
}

std::vector<int> first_cpu_of_each_core(hwloc_topology_t topology) {
  std::vector<int> cpus;
  for (unsigned i = 0; i < count_of(topology, HWLOC_OBJ_CORE); ++i) {
    const hwloc_obj_t core = hwloc_get_obj_by_type(topology, HWLOC_OBJ_CORE, i);
    const hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(topology, core->cpuset, HWLOC_OBJ_PU, 0);
    if (pu) cpus.push_back(static_cast<int>(pu->os_index));
  }
  return cpus;
}

OsInfo read_os() {
  utsname names{};
  if (uname(&names) != 0) return {};
  return {names.sysname, names.release, names.version, names.machine};
}

uint64_t total_ram_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) : 0;
}

std::vector<GpuInfo> read_gpus() {
  std::vector<GpuInfo> gpus;
  for (const CudaDevice& d : cuda_devices()) {
    GpuInfo& gpu = gpus.emplace_back();
    gpu = {.index = d.index,
           .name = d.name,
           .compute_major = d.compute_major,
           .compute_minor = d.compute_minor,
           .memory_bytes = d.memory_bytes,
           .pci_bus_id = d.pci_bus_id};
    if (const auto nvml = nvml::nvml_static(d.index)) {
      gpu.memory_bus_width_bits = nvml->bus_width_bits;
      gpu.max_memory_clock_mhz = nvml->max_memory_clock_mhz;
      gpu.theoretical_bandwidth_gbs = nvml->theoretical_bandwidth_gbps;
    }
  }
  return gpus;
}

}  // namespace

Result<HostTopology> read_host_topology() {
  auto topology = load_topology();
  if (!topology) return topology.error();
  hwloc_topology_t t = topology->get();

  HostTopology out;
  HostInfo& info = out.info;
  const CpuFeatures& features = cpu_features();
  info.cpu_vendor = features.vendor;
  info.cpu_model = features.model_name;
  info.cpu_features = features.names();
  info.packages = count_of(t, HWLOC_OBJ_PACKAGE);
  info.physical_cores = count_of(t, HWLOC_OBJ_CORE);
  info.hardware_threads = count_of(t, HWLOC_OBJ_PU);
  info.caches = read_caches(t);
  info.numa_nodes = read_numa_nodes(t);
  info.memory_bytes = total_ram_bytes();
  info.os = read_os();
  info.gpus = read_gpus();
  out.core_cpus = first_cpu_of_each_core(t);
  if (out.core_cpus.empty()) return fail("hwloc: the topology has no cores this process may run on");
  return out;
}

}  // namespace infertune
