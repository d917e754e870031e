// plan_placement on synthetic topologies: exactly which CPUs each worker gets and which NUMA node its
// memory binds to, for every --numa mode, with and without -C and --cpu-strict; distribute balances the
// nodes for every thread count; isolate stays on one node; physical cores come before SMT siblings; bad
// input is an error naming the flag.
#include "engine/threading/placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "placement_test_topologies.h"

namespace infertune {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

Topology load(const char* description) {
  auto topology = Topology::load_synthetic(description);
  EXPECT_TRUE(topology.ok()) << (topology.ok() ? "" : topology.error().message);
  return std::move(topology).value();
}

// A process started on CPU `start_cpu` with affinity `cpus`.
ProcessCpuState started(const CpuSet& cpus, unsigned start_cpu) { return {cpus, start_cpu}; }

PlacementOptions options(int threads, bool strict, NumaMode numa = NumaMode::none, std::string mask = "") {
  PlacementOptions o;
  o.threads = threads;
  o.cpu_strict = strict;
  o.numa = numa;
  o.cpu_mask = std::move(mask);
  return o;
}

PlacementPlan plan_ok(const Topology& topology, const PlacementOptions& o, const ProcessCpuState& process) {
  auto plan = plan_placement(topology, o, process);
  EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().message);
  return plan.ok() ? std::move(plan).value() : PlacementPlan{};
}

// The single CPU of each (strict) worker.
std::vector<unsigned> strict_cpus(const PlacementPlan& plan) {
  std::vector<unsigned> cpus;
  for (const WorkerPlacement& w : plan.workers) {
    EXPECT_EQ(w.cpus.size(), 1u);
    cpus.push_back(w.cpus.empty() ? ~0u : w.cpus.cpus()[0]);
  }
  return cpus;
}

std::vector<int> memory_nodes(const PlacementPlan& plan) {
  std::vector<int> nodes;
  for (const WorkerPlacement& w : plan.workers) nodes.push_back(w.numa_node ? static_cast<int>(*w.numa_node) : -1);
  return nodes;
}

std::string error_of(const Topology& topology, const PlacementOptions& o, const ProcessCpuState& process) {
  auto plan = plan_placement(topology, o, process);
  EXPECT_FALSE(plan.ok()) << "accepted:\n" << (plan.ok() ? plan->describe() : "");
  return plan.ok() ? "" : plan.error().message;
}

class PlacementFourNodes : public ::testing::Test {
 protected:
  const Topology topology = load(test::kTwoPackagesFourNodes);
  const ProcessCpuState everywhere = started(CpuSet::range(0, 31), 0);
};

TEST_F(PlacementFourNodes, DefaultThreadsArePhysicalCoresAndStrictTakesCoresBeforeSiblings) {
  const PlacementPlan plan = plan_ok(topology, options(kAutoThreads, true), everywhere);
  EXPECT_EQ(plan.n_threads, 16u);
  EXPECT_EQ(plan.n_threads_batch, 16u);  // -tb defaults to -t
  std::vector<unsigned> first_pus;
  std::vector<int> nodes;
  for (unsigned c = 0; c < 16; ++c) {
    first_pus.push_back(2 * c);
    nodes.push_back(static_cast<int>(c / 4));
  }
  EXPECT_THAT(strict_cpus(plan), ElementsAreArray(first_pus));
  EXPECT_THAT(memory_nodes(plan), ElementsAreArray(nodes));

  const PlacementPlan all = plan_ok(topology, options(20, true), everywhere);
  const std::vector<unsigned> cpus = strict_cpus(all);
  EXPECT_THAT(std::vector<unsigned>(cpus.begin() + 16, cpus.end()), ElementsAre(1, 3, 5, 7));
}

TEST_F(PlacementFourNodes, NonStrictFloatsOverEverythingAndBindsNoNode) {
  const PlacementPlan plan = plan_ok(topology, options(6, false), everywhere);
  ASSERT_EQ(plan.n_workers(), 6u);
  for (const WorkerPlacement& w : plan.workers) {
    EXPECT_EQ(w.cpus, CpuSet::range(0, 31));
    EXPECT_FALSE(w.numa_node.has_value());  // the CPUs span four nodes
  }
}

TEST_F(PlacementFourNodes, DistributeStrictTakesTheNodesInTurn) {
  const PlacementPlan plan = plan_ok(topology, options(8, true, NumaMode::distribute), everywhere);
  EXPECT_THAT(strict_cpus(plan), ElementsAre(0, 8, 16, 24, 2, 10, 18, 26));
  EXPECT_THAT(memory_nodes(plan), ElementsAre(0, 1, 2, 3, 0, 1, 2, 3));
  // Past the 16 physical cores, siblings, again node by node.
  const PlacementPlan more = plan_ok(topology, options(20, true, NumaMode::distribute), everywhere);
  const std::vector<unsigned> cpus = strict_cpus(more);
  EXPECT_THAT(std::vector<unsigned>(cpus.begin() + 12, cpus.end()), ElementsAre(6, 14, 22, 30, 1, 9, 17, 25));
}

TEST_F(PlacementFourNodes, DistributeNonStrictGivesEachWorkerItsNode) {
  const PlacementPlan plan = plan_ok(topology, options(6, false, NumaMode::distribute), everywhere);
  EXPECT_THAT(memory_nodes(plan), ElementsAre(0, 1, 2, 3, 0, 1));
  for (const WorkerPlacement& w : plan.workers)
    EXPECT_EQ(w.cpus, CpuSet::range(8 * *w.numa_node, 8 * *w.numa_node + 7));
}

TEST_F(PlacementFourNodes, DistributeBalancesEveryThreadCountAndEveryPrefix) {
  for (bool strict : {true, false}) {
    for (int n = 1; n <= 32; ++n) {
      const PlacementPlan plan = plan_ok(topology, options(n, strict, NumaMode::distribute), everywhere);
      std::map<unsigned, int> per_node;
      for (unsigned i = 0; i < plan.n_workers(); ++i) {
        per_node[*plan.workers[i].numa_node]++;
        int lo = 1 << 30, hi = 0;
        for (unsigned node = 0; node < 4; ++node) {
          lo = std::min(lo, per_node[node]);
          hi = std::max(hi, per_node[node]);
        }
        EXPECT_LE(hi - lo, 1) << "n=" << n << " strict=" << strict << " after worker " << i;
      }
      if (strict) {
        // No PU twice, and no sibling while a core of the same node is free.
        std::vector<unsigned> cpus = strict_cpus(plan);
        std::sort(cpus.begin(), cpus.end());
        EXPECT_EQ(std::unique(cpus.begin(), cpus.end()), cpus.end()) << n;
        const unsigned siblings =
            static_cast<unsigned>(std::count_if(cpus.begin(), cpus.end(), [](unsigned c) { return c % 2 == 1; }));
        EXPECT_EQ(siblings, n > 16 ? static_cast<unsigned>(n - 16) : 0u) << n;
      }
    }
  }
}

TEST_F(PlacementFourNodes, TwoThreadCountsShareOnePoolWhosePrefixIsBalanced) {
  PlacementOptions o = options(4, true, NumaMode::distribute);
  o.threads_batch = 8;
  const PlacementPlan plan = plan_ok(topology, o, everywhere);
  EXPECT_EQ(plan.n_threads, 4u);
  EXPECT_EQ(plan.n_threads_batch, 8u);
  EXPECT_EQ(plan.n_workers(), 8u);
  EXPECT_EQ(plan.threads_for(1), 4u);
  EXPECT_EQ(plan.threads_for(512), 8u);
  const std::vector<int> nodes = memory_nodes(plan);
  EXPECT_THAT(std::vector<int>(nodes.begin(), nodes.begin() + 4), ElementsAre(0, 1, 2, 3));
}

TEST_F(PlacementFourNodes, IsolateStaysOnTheStartNode) {
  const ProcessCpuState on_cpu_13 = started(CpuSet::range(0, 31), 13);  // node 1
  const PlacementPlan strict = plan_ok(topology, options(kAutoThreads, true, NumaMode::isolate), on_cpu_13);
  EXPECT_THAT(strict_cpus(strict), ElementsAre(8, 10, 12, 14));  // node 1's 4 cores
  EXPECT_THAT(memory_nodes(strict), ElementsAre(1, 1, 1, 1));
  const PlacementPlan siblings = plan_ok(topology, options(8, true, NumaMode::isolate), on_cpu_13);
  EXPECT_THAT(strict_cpus(siblings), ElementsAre(8, 10, 12, 14, 9, 11, 13, 15));
  const PlacementPlan floating = plan_ok(topology, options(3, false, NumaMode::isolate), on_cpu_13);
  for (const WorkerPlacement& w : floating.workers) {
    EXPECT_EQ(w.cpus, CpuSet::range(8, 15));
    EXPECT_EQ(w.numa_node, 1u);
  }
  EXPECT_EQ(floating.allowed, CpuSet::range(8, 15));
  // More threads than node 1 has PUs, strict: an error.
  EXPECT_THAT(error_of(topology, options(9, true, NumaMode::isolate), on_cpu_13), HasSubstr("--cpu-strict"));
  // A mask that leaves node 1 nothing.
  EXPECT_THAT(error_of(topology, options(2, false, NumaMode::isolate, "0xFF"), on_cpu_13), HasSubstr("--numa isolate"));
}

TEST_F(PlacementFourNodes, NumactlHonoursTheStartAffinity) {
  const ProcessCpuState numactl = started(CpuSet::range(4, 11), 4);  // e.g. numactl -C 4-11
  const PlacementPlan strict = plan_ok(topology, options(kAutoThreads, true, NumaMode::numactl), numactl);
  EXPECT_THAT(strict_cpus(strict), ElementsAre(4, 6, 8, 10));  // cores 2-5, one PU each
  EXPECT_THAT(memory_nodes(strict), ElementsAre(0, 0, 1, 1));
  const PlacementPlan floating = plan_ok(topology, options(2, false, NumaMode::numactl), numactl);
  for (const WorkerPlacement& w : floating.workers) {
    EXPECT_EQ(w.cpus, CpuSet::range(4, 11));
    EXPECT_FALSE(w.numa_node.has_value());  // spans nodes 0 and 1
  }
  // -C and numactl together keep what both allow.
  const PlacementPlan both = plan_ok(topology, options(kAutoThreads, true, NumaMode::numactl, "0-5"), numactl);
  EXPECT_THAT(strict_cpus(both), ElementsAre(4));
  EXPECT_THAT(error_of(topology, options(1, false, NumaMode::numactl, "0x3"), numactl), HasSubstr("--numa numactl"));
}

TEST_F(PlacementFourNodes, NoNumaModeInheritsTheAffinityUnlessMasked) {
  const ProcessCpuState taskset = started(CpuSet::range(16, 23), 16);
  const PlacementPlan inherited = plan_ok(topology, options(kAutoThreads, true), taskset);
  EXPECT_THAT(strict_cpus(inherited), ElementsAre(16, 18, 20, 22));
  EXPECT_THAT(memory_nodes(inherited), ElementsAre(2, 2, 2, 2));
  // An explicit mask wins over the inherited affinity, as in llama.cpp.
  const PlacementPlan masked = plan_ok(topology, options(kAutoThreads, true, NumaMode::none, "0xF0"), taskset);
  EXPECT_THAT(strict_cpus(masked), ElementsAre(4, 6));
}

TEST_F(PlacementFourNodes, MasksSelectCpusAndStrictPinsWithinThem) {
  const PlacementPlan plan = plan_ok(topology, options(4, true, NumaMode::none, "0xF0"), everywhere);
  EXPECT_THAT(strict_cpus(plan), ElementsAre(4, 6, 5, 7));
  EXPECT_THAT(memory_nodes(plan), ElementsAre(0, 0, 0, 0));
  const PlacementPlan floating = plan_ok(topology, options(5, false, NumaMode::none, "0xF0"), everywhere);
  ASSERT_EQ(floating.n_workers(), 5u);
  for (const WorkerPlacement& w : floating.workers) {
    EXPECT_EQ(w.cpus, CpuSet::range(4, 7));
    EXPECT_EQ(w.numa_node, 0u);  // all of the mask is in node 0
  }
  EXPECT_THAT(floating.warnings, ElementsAre(HasSubstr("more threads than the 4 allowed CPUs")));
  // A range list; CPU 8 is the only allowed PU of core 4.
  const PlacementPlan list = plan_ok(topology, options(5, true, NumaMode::none, "0-3,8"), everywhere);
  EXPECT_THAT(strict_cpus(list), ElementsAre(0, 2, 8, 1, 3));
  EXPECT_THAT(memory_nodes(list), ElementsAre(0, 0, 1, 0, 0));
  // The second sibling alone counts as its core's first choice.
  const PlacementPlan sibling = plan_ok(topology, options(3, true, NumaMode::none, "1-3"), everywhere);
  EXPECT_THAT(strict_cpus(sibling), ElementsAre(1, 2, 3));
  // Distribute over a mask covering two nodes.
  const PlacementPlan spread = plan_ok(topology, options(4, true, NumaMode::distribute, "0x0F0F"), everywhere);
  EXPECT_THAT(strict_cpus(spread), ElementsAre(0, 8, 2, 10));
  EXPECT_THAT(memory_nodes(spread), ElementsAre(0, 1, 0, 1));
}

TEST_F(PlacementFourNodes, BadMasksAndCountsNameTheFlag) {
  EXPECT_THAT(error_of(topology, options(1, false, NumaMode::none, "0x100000000"), everywhere),
              HasSubstr("-C/--cpu-mask '0x100000000' selects CPUs 32"));
  EXPECT_THAT(error_of(topology, options(1, false, NumaMode::none, "0x0"), everywhere), HasSubstr("-C/--cpu-mask"));
  EXPECT_THAT(error_of(topology, options(1, false, NumaMode::none, "0xZ"), everywhere), HasSubstr("-C/--cpu-mask"));
  EXPECT_THAT(error_of(topology, options(5, true, NumaMode::none, "0xF0"), everywhere),
              HasSubstr("-t/--threads 5: --cpu-strict 1 needs a CPU per thread, but only 4 are allowed"));
  PlacementOptions batch = options(2, true, NumaMode::none, "0xF0");
  batch.threads_batch = 6;
  EXPECT_THAT(error_of(topology, batch, everywhere), HasSubstr("-tb/--threads-batch 6"));
  PlacementOptions prio = options(1, false);
  prio.priority = 4;
  EXPECT_THAT(error_of(topology, prio, everywhere), HasSubstr("--prio"));
  PlacementOptions poll = options(1, false);
  poll.poll = 101;
  EXPECT_THAT(error_of(topology, poll, everywhere), HasSubstr("--poll"));
  EXPECT_THAT(error_of(topology, options(kMaxThreads + 1, false), everywhere), HasSubstr("-t/--threads"));
  // CPUs of the mask beyond the machine are ignored with a warning.
  const PlacementPlan partly = plan_ok(topology, options(1, false, NumaMode::none, "0x300000001"), everywhere);
  EXPECT_EQ(partly.allowed, CpuSet({0}));
  EXPECT_THAT(partly.warnings, ElementsAre(HasSubstr("CPUs 32-33 are not on this machine")));
}

TEST(PlacementPlan, UnknownNumaModeNamesTheFlag) {
  auto mode = parse_numa_mode("interleave");
  ASSERT_FALSE(mode.ok());
  EXPECT_THAT(mode.error().message, HasSubstr("--numa: unknown mode 'interleave'"));
  EXPECT_EQ(*parse_numa_mode("distribute"), NumaMode::distribute);
  EXPECT_EQ(*parse_numa_mode("isolate"), NumaMode::isolate);
  EXPECT_EQ(*parse_numa_mode("numactl"), NumaMode::numactl);
}

TEST(PlacementPlan, EightCoresSmt2LinuxNumbering) {
  const Topology topology = load(test::kEightCoresSmt2);
  const ProcessCpuState everywhere = started(CpuSet::range(0, 15), 0);
  const PlacementPlan cores = plan_ok(topology, options(kAutoThreads, true), everywhere);
  EXPECT_THAT(strict_cpus(cores), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(memory_nodes(cores), ElementsAre(0, 0, 0, 0, 0, 0, 0, 0));
  const PlacementPlan twelve = plan_ok(topology, options(12, true), everywhere);
  EXPECT_THAT(strict_cpus(twelve), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
  // Only the siblings allowed: each is its core's first choice, and there are 8 cores' worth.
  const PlacementPlan siblings = plan_ok(topology, options(kAutoThreads, true, NumaMode::none, "0xFF00"), everywhere);
  EXPECT_THAT(strict_cpus(siblings), ElementsAre(8, 9, 10, 11, 12, 13, 14, 15));
  // Mask 0x0F0F: cores 0-3, both PUs each: 4 threads by default, cores first.
  const PlacementPlan pairs = plan_ok(topology, options(6, true, NumaMode::none, "0x0F0F"), everywhere);
  EXPECT_EQ(plan_ok(topology, options(kAutoThreads, true, NumaMode::none, "0x0F0F"), everywhere).n_threads, 4u);
  EXPECT_THAT(strict_cpus(pairs), ElementsAre(0, 1, 2, 3, 8, 9));
  // One node: distribute and isolate change nothing.
  const PlacementPlan distribute = plan_ok(topology, options(4, true, NumaMode::distribute), everywhere);
  EXPECT_THAT(strict_cpus(distribute), ElementsAre(0, 1, 2, 3));
  const PlacementPlan floating = plan_ok(topology, options(3, false, NumaMode::isolate), everywhere);
  for (const WorkerPlacement& w : floating.workers) {
    EXPECT_EQ(w.cpus, CpuSet::range(0, 15));
    EXPECT_EQ(w.numa_node, 0u);
  }
}

TEST(PlacementPlan, SingleCoreMachine) {
  const Topology topology = load(test::kSingleCore);
  const ProcessCpuState process = started(CpuSet({0}), 0);
  for (NumaMode mode : {NumaMode::none, NumaMode::distribute, NumaMode::isolate, NumaMode::numactl}) {
    const PlacementPlan plan = plan_ok(topology, options(kAutoThreads, true, mode), process);
    EXPECT_THAT(strict_cpus(plan), ElementsAre(0)) << numa_mode_name(mode);
    EXPECT_THAT(memory_nodes(plan), ElementsAre(0));
  }
  EXPECT_THAT(error_of(topology, options(2, true), process), HasSubstr("only 1 are allowed"));
  const PlacementPlan shared = plan_ok(topology, options(2, false), process);
  EXPECT_EQ(shared.n_workers(), 2u);
  EXPECT_EQ(shared.warnings.size(), 1u);
  EXPECT_EQ(shared.describe(), "thread 0: CPU 0, memory node 0\nthread 1: CPU 0, memory node 0\n");
}

}  // namespace
}  // namespace infertune
