#pragma once
// A thread pool placed on this machine per the placement flags (-t, -tb, -C, --cpu-strict, --numa, --prio,
// --poll): the machine's topology, the plan computed from it and the pool started on that plan. `run`,
// `bench` and the other measuring commands start their pools through this one function.
#include <memory>
#include <string>
#include <vector>

#include "engine/threading/placement.h"
#include "engine/threading/placement_options.h"
#include "engine/threading/thread_pool.h"
#include "engine/threading/topology.h"
#include "kernels/result.h"

namespace infertune {

// The topology outlives the pool (the pool binds through it); both stay put on the heap.
struct PlacedPool {
  Topology topology;
  PlacementPlan plan;
  std::unique_ptr<ThreadPool> pool;
  // What the plan ignored and what failed when the workers were bound, for the caller's log.
  std::vector<std::string> warnings() const;
};

// Errors name the flag (an unusable -C, too many threads under --cpu-strict 1, ...), or say why the
// topology could not be read or the pool not started.
Result<std::unique_ptr<PlacedPool>> start_placed_pool(const PlacementOptions& options);

}  // namespace infertune
