// The host description against sources independent of hwloc's code: /proc/cpuinfo, /proc/meminfo,
// /sys/devices/system/node, /sys/devices/system/cpu/*/cache, sysconf and the process's CPU affinity.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "bench/probe/host_info.h"
#include "kernels/cpu_features.h"
#include "kernels/cuda/cuda_devices.h"

namespace infertune {
namespace {

namespace fs = std::filesystem;

std::string read_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::set<int> affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::set<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus.insert(c);
    }
  }
  return cpus;
}

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}
std::set<int> parse_cpu_list(const std::string& text) {
  std::set<int> cpus;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    if (item.empty()) continue;
    const auto dash = item.find('-');
    const int first = std::stoi(item.substr(0, dash));
    const int last = dash == std::string::npos ? first : std::stoi(item.substr(dash + 1));
    for (int c = first; c <= last; ++c) cpus.insert(c);
  }
  return cpus;
}

// The "MemTotal:" figure of /proc/meminfo or of a node's meminfo ("Node 0 MemTotal:  13068008 kB"); 0 when absent.
uint64_t mem_total_kib(const fs::path& meminfo) {
  std::ifstream in(meminfo);
  uint64_t kib = 0;
  for (std::string word; in >> word;) {
    if (word == "MemTotal:") {
      in >> kib;
      break;
    }
  }
  return kib;
}

// How far a node's memory may grow between hwloc's read and the test's (a hotplugged memory block).
constexpr uint64_t kMemoryDriftSlack = 256ull << 20;

struct CpuinfoEntry {
  int processor = -1, physical_id = 0, core_id = -1;
  std::string model_name;
};

std::vector<CpuinfoEntry> proc_cpuinfo() {
  std::vector<CpuinfoEntry> entries;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "processor") entries.push_back({std::stoi(value), 0, -1, ""});
    if (entries.empty()) continue;
    if (key == "physical id") entries.back().physical_id = std::stoi(value);
    if (key == "core id") entries.back().core_id = std::stoi(value);
    if (key == "model name") entries.back().model_name = value;
  }
  return entries;
}

class Topology : public ::testing::Test {
 protected:
  void SetUp() override {
    auto topology = read_host_topology();
    ASSERT_TRUE(topology) << topology.error().message;
    topology_ = *topology;
  }
  const HostInfo& host() const { return topology_.info; }
  HostTopology topology_;
};

TEST_F(Topology, CpuIdentityIsCpuidsOwn) {
  EXPECT_EQ(host().cpu_vendor, cpu_features().vendor);
  EXPECT_EQ(host().cpu_model, cpu_features().model_name);
  EXPECT_EQ(host().cpu_features, cpu_features().names());
  const auto entries = proc_cpuinfo();
  if (entries.empty() || entries[0].model_name.empty()) GTEST_SKIP() << "/proc/cpuinfo has no model name";
  // The kernel prints the same CPUID brand string, trailing blanks aside.
  std::string name = entries[0].model_name;
  name.erase(name.find_last_not_of(' ') + 1);
  EXPECT_EQ(host().cpu_model, name);
}

TEST_F(Topology, ThreadsAndCoresAgreeWithProcCpuinfoAndAffinity) {
  const std::set<int> allowed = affinity();
  ASSERT_FALSE(allowed.empty());
  EXPECT_EQ(host().hardware_threads, allowed.size());
  const auto entries = proc_cpuinfo();
  std::set<std::pair<int, int>> cores;
  std::set<int> packages;
  bool has_core_ids = true;
  for (const auto& e : entries) {
    if (!allowed.count(e.processor)) continue;
    has_core_ids = has_core_ids && e.core_id >= 0;
    cores.insert({e.physical_id, e.core_id});
    packages.insert(e.physical_id);
  }
  if (!has_core_ids) GTEST_SKIP() << "/proc/cpuinfo lists no core ids";
  EXPECT_EQ(host().physical_cores, cores.size());
  EXPECT_EQ(host().packages, packages.size());
  if (allowed.size() == static_cast<size_t>(sysconf(_SC_NPROCESSORS_ONLN))) {
    EXPECT_EQ(host().hardware_threads, static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN)));
  }
}

TEST_F(Topology, CoreCpusAreOnePerCoreAndAllowed) {
  const std::set<int> allowed = affinity();
  const std::set<int> distinct(topology_.core_cpus.begin(), topology_.core_cpus.end());
  EXPECT_EQ(topology_.core_cpus.size(), host().physical_cores);
  EXPECT_EQ(distinct.size(), topology_.core_cpus.size());
  for (int cpu : topology_.core_cpus) EXPECT_TRUE(allowed.count(cpu)) << cpu;
  // No two chosen CPUs are hardware threads of one core (sysfs names each CPU's core siblings).
  std::set<std::string> sibling_groups;
  for (int cpu : topology_.core_cpus) {
    const std::string siblings = read_line(fs::path("/sys/devices/system/cpu") / ("cpu" + std::to_string(cpu)) /
                                           "topology/thread_siblings_list");
    if (siblings.empty()) GTEST_SKIP() << "sysfs has no thread_siblings_list";
    EXPECT_TRUE(sibling_groups.insert(siblings).second) << "cpu " << cpu << " shares a core";
  }
}

// The kernel's figure moves while the machine runs (balloon drivers, memory hotplug), so the probe's read
// is bracketed by two reads of /proc/meminfo rather than compared with one read made at another moment.
TEST_F(Topology, TotalRamIsProcMeminfosMemTotal) {
  const uint64_t before = mem_total_kib("/proc/meminfo");
  auto topology = read_host_topology();
  const uint64_t after = mem_total_kib("/proc/meminfo");
  ASSERT_TRUE(topology) << topology.error().message;
  ASSERT_GT(before, 0u);
  EXPECT_GE(topology->info.memory_bytes, std::min(before, after) * 1024);
  EXPECT_LE(topology->info.memory_bytes, std::max(before, after) * 1024);
}

TEST_F(Topology, NumaNodesAgreeWithSysfs) {
  const fs::path nodes_dir = "/sys/devices/system/node";
  if (!fs::exists(nodes_dir)) GTEST_SKIP() << nodes_dir << " is absent (a kernel without NUMA)";
  // Nodes that have CPUs or memory; hwloc leaves out nodes with neither.
  std::map<unsigned, fs::path> nodes;
  for (const auto& entry : fs::directory_iterator(nodes_dir)) {
    const std::string name = entry.path().filename();
    if (name.rfind("node", 0) == 0 && name.size() > 4 && std::isdigit(static_cast<unsigned char>(name[4]))) {
      nodes[std::stoul(name.substr(4))] = entry.path();
    }
  }
  const std::set<int> allowed = affinity();
  const bool all_cpus_allowed = allowed.size() == static_cast<size_t>(sysconf(_SC_NPROCESSORS_ONLN));
  if (all_cpus_allowed) {
    EXPECT_EQ(host().numa_nodes.size(), nodes.size());
  }
  for (const HostNumaNode& node : host().numa_nodes) {
    SCOPED_TRACE("node " + std::to_string(node.os_index));
    ASSERT_TRUE(nodes.count(node.os_index));
    // "Node 0 MemTotal:  13068008 kB"; hwloc counts huge-page pools separately, so a node with some has less.
    // The figure is read after hwloc's (it may have moved since: hotplug, balloon), hence the slack above.
    const uint64_t kib = mem_total_kib(nodes[node.os_index] / "meminfo");
    EXPECT_LE(node.memory_bytes, kib * 1024 + kMemoryDriftSlack);
    EXPECT_GE(node.memory_bytes, kib * 1024 * 9 / 10);
    std::set<int> sysfs_cpus;
    for (int c : parse_cpu_list(read_line(nodes[node.os_index] / "cpulist"))) {
      if (allowed.count(c)) sysfs_cpus.insert(c);
    }
    EXPECT_EQ(parse_cpu_list(node.cpus), sysfs_cpus);
  }
}

// One cache kind in sysfs: (level name, size) -> instances, an instance being a distinct shared_cpu_list.
std::map<std::pair<std::string, uint64_t>, std::set<std::string>> sysfs_caches(const std::set<int>& cpus) {
  std::map<std::pair<std::string, uint64_t>, std::set<std::string>> caches;
  for (int cpu : cpus) {
    const fs::path dir = fs::path("/sys/devices/system/cpu") / ("cpu" + std::to_string(cpu)) / "cache";
    if (!fs::exists(dir)) continue;
    for (const auto& index : fs::directory_iterator(dir)) {
      if (index.path().filename().string().rfind("index", 0) != 0) continue;
      const std::string type = read_line(index.path() / "type");
      const std::string level = read_line(index.path() / "level");
      const std::string size = read_line(index.path() / "size");  // "48K", "32768K", "1M"
      if (type == "Instruction" || level.empty() || size.empty()) continue;
      uint64_t bytes = std::stoull(size);
      if (size.back() == 'K') bytes <<= 10;
      if (size.back() == 'M') bytes <<= 20;
      const std::string name = level == "1" ? "L1d" : "L" + level;
      caches[{name, bytes}].insert(read_line(index.path() / "shared_cpu_list"));
    }
  }
  return caches;
}

TEST_F(Topology, CachesAgreeWithSysfs) {
  const auto expected = sysfs_caches(affinity());
  if (expected.empty()) GTEST_SKIP() << "sysfs describes no caches";
  std::map<std::pair<std::string, uint64_t>, unsigned> got;
  for (const HostCache& c : host().caches) got[{c.level, c.size_bytes}] = c.count;
  std::map<std::pair<std::string, uint64_t>, unsigned> want;
  for (const auto& [kind, instances] : expected) want[kind] = static_cast<unsigned>(instances.size());
  EXPECT_EQ(got, want);
  ASSERT_FALSE(host().caches.empty());
  EXPECT_EQ(host().caches.front().level, "L1d");
}

TEST_F(Topology, L1dAndL2AgreeWithSysconfWhenItKnows) {
  // glibc reads these from CPUID itself; a VM may report a different L3 there, so only L1d/L2 are compared.
  const long l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  for (const HostCache& c : host().caches) {
    if (c.level == "L1d" && l1d > 0) {
      EXPECT_EQ(c.size_bytes, static_cast<uint64_t>(l1d));
    }
    if (c.level == "L2" && l2 > 0 && host().caches.size() <= 3) {
      EXPECT_EQ(c.size_bytes, static_cast<uint64_t>(l2));
    }
  }
}

TEST_F(Topology, OsIsUname) {
  utsname names{};
  ASSERT_EQ(uname(&names), 0);
  EXPECT_EQ(host().os.name, names.sysname);
  EXPECT_EQ(host().os.release, names.release);
  EXPECT_EQ(host().os.machine, names.machine);
}

TEST_F(Topology, GpusAreTheCudaRuntimes) {
  const auto devices = cuda_devices();
  ASSERT_EQ(host().gpus.size(), devices.size());
  if (devices.empty()) {
    GTEST_SKIP() << no_cuda_gpu_reason();
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    EXPECT_EQ(host().gpus[i].name, devices[i].name);
    EXPECT_EQ(host().gpus[i].memory_bytes, devices[i].memory_bytes);
  }
}

}  // namespace
}  // namespace infertune
