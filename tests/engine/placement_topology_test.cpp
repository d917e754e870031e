// Topology: packages, cores, SMT ranks, NUMA nodes with memory and caches read from hwloc synthetic
// descriptions (whose layout is known by construction), from XML, and from this machine.
#include "engine/threading/topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/threading/process_cpu_state.h"
#include "placement_test_topologies.h"

namespace infertune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Topology load(const char* description) {
  auto topology = Topology::load_synthetic(description);
  EXPECT_TRUE(topology.ok()) << (topology.ok() ? "" : topology.error().message);
  return std::move(topology).value();
}

TEST(PlacementTopology, TwoPackagesFourNodes) {
  const Topology topology = load(test::kTwoPackagesFourNodes);
  EXPECT_FALSE(topology.is_this_system());
  EXPECT_EQ(topology.n_packages(), 2u);
  EXPECT_EQ(topology.n_cores(), 16u);
  EXPECT_EQ(topology.n_pus(), 32u);
  ASSERT_EQ(topology.numa_nodes().size(), 4u);
  for (unsigned k = 0; k < 4; ++k) {
    const NumaNodeInfo& node = topology.numa_nodes()[k];
    EXPECT_EQ(node.os_index, k);
    EXPECT_EQ(node.memory_bytes, 8'000'000'000u);
    EXPECT_EQ(node.cpus, CpuSet::range(8 * k, 8 * k + 7));
  }
  for (const PuInfo& pu : topology.pus()) {
    EXPECT_EQ(pu.core, pu.os_index / 2) << pu.os_index;
    EXPECT_EQ(pu.smt_rank, pu.os_index % 2) << pu.os_index;
    EXPECT_EQ(pu.numa_node, pu.os_index / 8) << pu.os_index;
    EXPECT_EQ(pu.package, pu.os_index / 16) << pu.os_index;
  }
  EXPECT_EQ(topology.cache_bytes(3), 16'000'000u);
  EXPECT_EQ(topology.cache_bytes(2), 0u);
  EXPECT_EQ(std::count_if(topology.caches().begin(), topology.caches().end(),
                          [](const CacheInfo& c) { return c.level == 3; }),
            4);
  EXPECT_EQ(topology.summary(), "2 packages, 16 cores, 32 PUs, 4 NUMA nodes (29.8 GiB), L3 15.3 MiB x4");
}

TEST(PlacementTopology, LinuxStyleSiblingNumbering) {
  const Topology topology = load(test::kEightCoresSmt2);
  EXPECT_EQ(topology.n_cores(), 8u);
  EXPECT_EQ(topology.n_pus(), 16u);
  for (unsigned cpu = 0; cpu < 16; ++cpu) {
    const PuInfo* pu = topology.find_pu(cpu);
    ASSERT_NE(pu, nullptr) << cpu;
    EXPECT_EQ(pu->core, cpu % 8) << cpu;
    EXPECT_EQ(pu->smt_rank, cpu / 8) << cpu;
    EXPECT_EQ(pu->numa_node, 0u);
  }
  EXPECT_EQ(topology.find_pu(16), nullptr);
  EXPECT_EQ(topology.cache_bytes(2), 1'000'000u);
  EXPECT_EQ(topology.cache_bytes(3), 32'000'000u);
  // The L2 of core 3 is shared by its two PUs, 3 and 11.
  bool found = false;
  for (const CacheInfo& cache : topology.caches()) {
    if (cache.level == 2 && cache.cpus.contains(3)) {
      EXPECT_EQ(cache.cpus, CpuSet({3, 11}));
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(PlacementTopology, SingleCore) {
  const Topology topology = load(test::kSingleCore);
  EXPECT_EQ(topology.n_packages(), 1u);
  EXPECT_EQ(topology.n_cores(), 1u);
  EXPECT_EQ(topology.n_pus(), 1u);
  ASSERT_EQ(topology.numa_nodes().size(), 1u);  // hwloc adds the machine's node
  EXPECT_EQ(topology.numa_nodes()[0].cpus, CpuSet({0}));
}

TEST(PlacementTopology, XmlRoundTripKeepsTheLayout) {
  const Topology original = load(test::kTwoPackagesFourNodes);
  auto xml = original.export_xml();
  ASSERT_TRUE(xml.ok()) << xml.error().message;
  EXPECT_THAT(*xml, HasSubstr("<topology"));
  auto copy = Topology::load_xml(*xml);
  ASSERT_TRUE(copy.ok()) << copy.error().message;
  EXPECT_FALSE(copy->is_this_system());
  ASSERT_EQ(copy->n_pus(), original.n_pus());
  for (size_t i = 0; i < original.pus().size(); ++i) {
    EXPECT_EQ(copy->pus()[i].os_index, original.pus()[i].os_index);
    EXPECT_EQ(copy->pus()[i].core, original.pus()[i].core);
    EXPECT_EQ(copy->pus()[i].numa_node, original.pus()[i].numa_node);
  }
  ASSERT_EQ(copy->numa_nodes().size(), 4u);
  EXPECT_EQ(copy->numa_nodes()[3].memory_bytes, 8'000'000'000u);
}

TEST(PlacementTopology, BadDescriptionsAreErrors) {
  auto synthetic = Topology::load_synthetic("pack:two core:x");
  ASSERT_FALSE(synthetic.ok());
  EXPECT_THAT(synthetic.error().message, HasSubstr("pack:two core:x"));
  auto xml = Topology::load_xml("<not a topology>");
  EXPECT_FALSE(xml.ok());
}

TEST(PlacementTopology, ThisMachine) {
  auto topology = Topology::load_machine();
  ASSERT_TRUE(topology.ok()) << topology.error().message;
  EXPECT_TRUE(topology->is_this_system());
  ASSERT_GE(topology->n_pus(), 1u);
  EXPECT_GE(topology->n_cores(), 1u);
  EXPECT_LE(topology->n_cores(), topology->n_pus());
  ASSERT_GE(topology->numa_nodes().size(), 1u);
  // Every PU lies in a node that is listed, and the nodes' CPUs cover the PUs.
  CpuSet covered;
  for (const NumaNodeInfo& node : topology->numa_nodes()) covered = covered.unite(node.cpus);
  for (const PuInfo& pu : topology->pus()) {
    EXPECT_TRUE(covered.contains(pu.os_index)) << pu.os_index;
    EXPECT_TRUE(std::any_of(topology->numa_nodes().begin(), topology->numa_nodes().end(),
                            [&](const NumaNodeInfo& n) { return n.os_index == pu.numa_node; }));
  }
  // The process may run on some of them (a cgroup may allow more CPUs than the affinity mask has).
  EXPECT_FALSE(ProcessCpuState::at_start().start_affinity.intersect(topology->all_cpus()).empty());
}

}  // namespace
}  // namespace infertune
