// Applying a plan on this machine: each worker (and the calling thread, while the pool lives) ends up bound
// to exactly the CPUs its plan names, or the pool reports a warning for it; the caller's binding comes back
// when the pool goes. Memory binding and NUMA buffers work (and are a no-op on a one-node machine), also
// through a synthetic multi-node topology, where hwloc binds nothing.
#include "engine/threading/binding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>

#include "engine/threading/thread_pool.h"
#include "placement_test_topologies.h"

namespace infertune {
namespace {

using ::testing::HasSubstr;

Topology machine() {
  auto topology = Topology::load_machine();
  EXPECT_TRUE(topology.ok()) << (topology.ok() ? "" : topology.error().message);
  return std::move(topology).value();
}

bool has_warning_for(const std::vector<std::string>& warnings, unsigned thread) {
  const std::string prefix = "thread " + std::to_string(thread);
  return std::any_of(warnings.begin(), warnings.end(), [&](const std::string& w) { return w.rfind(prefix, 0) == 0; });
}

void check_workers_bound_as_planned(bool strict) {
  const Topology topology = machine();
  PlacementOptions options;
  options.cpu_strict = strict;
  const size_t allowed = ProcessCpuState::at_start().start_affinity.intersect(topology.all_cpus()).size();
  options.threads = static_cast<int>(std::min<size_t>(4, allowed));
  auto plan = plan_placement(topology, options);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  auto before = current_thread_cpus(topology);
  ASSERT_TRUE(before.ok()) << before.error().message;
  {
    auto pool = ThreadPool::create(pool_config(*plan, &topology));
    ASSERT_TRUE(pool.ok()) << pool.error().message;
    const std::vector<std::string> warnings = (*pool)->warnings();
    std::mutex mutex;
    std::vector<CpuSet> bound(plan->n_workers());
    ASSERT_TRUE((*pool)
                    ->run([&](unsigned thread, unsigned) {
                      auto cpus = current_thread_cpus(topology);
                      std::lock_guard lock(mutex);
                      if (cpus.ok()) bound[thread] = *cpus;
                    })
                    .ok());
    for (unsigned i = 0; i < plan->n_workers(); ++i) {
      if (has_warning_for(warnings, i)) continue;  // a refused binding is reported, not hidden
      EXPECT_EQ(bound[i], plan->workers[i].cpus) << "thread " << i << "\n" << plan->describe();
    }
  }
  auto after = current_thread_cpus(topology);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, *before);  // the caller's binding is restored
}

TEST(PlacementBinding, StrictWorkersRunOnTheirOwnCpu) { check_workers_bound_as_planned(true); }
TEST(PlacementBinding, FloatingWorkersRunOnTheAllowedSet) { check_workers_bound_as_planned(false); }

TEST(PlacementBinding, BindAndReadBackOnThisMachine) {
  const Topology topology = machine();
  const CpuSet allowed = ProcessCpuState::at_start().start_affinity.intersect(topology.all_cpus());
  ASSERT_FALSE(allowed.empty());
  std::optional<std::string> warning;
  Result<CpuSet> bound = CpuSet();
  std::thread thread([&] {
    warning = bind_current_thread_cpus(topology, CpuSet({allowed.cpus().back()}));
    bound = current_thread_cpus(topology);
  });
  thread.join();
  if (warning) GTEST_SKIP() << "this machine refuses thread affinity: " << *warning;
  ASSERT_TRUE(bound.ok());
  EXPECT_EQ(*bound, CpuSet({allowed.cpus().back()}));
}

TEST(PlacementBinding, MemoryBindingOnThisMachine) {
  const Topology topology = machine();
  const unsigned node = topology.numa_nodes().front().os_index;
  std::optional<std::string> warning;
  std::thread thread([&] { warning = bind_current_thread_memory(topology, node); });
  thread.join();
  if (topology.numa_nodes().size() == 1) {
    EXPECT_FALSE(warning.has_value());  // skipped: nothing to choose
  } else if (warning) {
    EXPECT_THAT(*warning, HasSubstr("NUMA node"));
  }
  auto buffer = NumaBuffer::allocate(topology, 1 << 20, node);
  ASSERT_TRUE(buffer.ok()) << buffer.error().message;
  ASSERT_NE(buffer->data(), nullptr);
  EXPECT_EQ(buffer->size(), 1u << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % 4096, 0u);
  std::memset(buffer->data(), 0x5A, buffer->size());
  if (topology.numa_nodes().size() == 1) {
    EXPECT_TRUE(buffer->bound());
  }
  auto unbound = NumaBuffer::allocate(topology, 4096, std::nullopt);
  ASSERT_TRUE(unbound.ok());
  EXPECT_FALSE(unbound->bound());
  auto empty = NumaBuffer::allocate(topology, 0, node);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->data(), nullptr);
  NumaBuffer moved = std::move(*buffer);
  EXPECT_NE(moved.data(), nullptr);
  EXPECT_EQ(buffer->data(), nullptr);
}

TEST(PlacementBinding, SyntheticTopologyBindsNothingButSucceeds) {
  auto topology = Topology::load_synthetic(test::kTwoPackagesFourNodes);
  ASSERT_TRUE(topology.ok());
  auto plan = plan_placement(*topology, PlacementOptions{4, 4, "", true, NumaMode::distribute, 0, 0},
                             ProcessCpuState{CpuSet::range(0, 31), 0});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  auto pool = ThreadPool::create(pool_config(*plan, &*topology));
  ASSERT_TRUE(pool.ok()) << pool.error().message;
  EXPECT_TRUE((*pool)->warnings().empty()) << (*pool)->warnings().front();
  std::atomic<int> ran{0};
  EXPECT_TRUE((*pool)->run([&](unsigned, unsigned) { ran++; }).ok());
  EXPECT_EQ(ran.load(), 4);
  auto buffer = NumaBuffer::allocate(*topology, 8192, 3);
  ASSERT_TRUE(buffer.ok());
  std::memset(buffer->data(), 1, buffer->size());
}

}  // namespace
}  // namespace infertune
