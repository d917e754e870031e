#include "engine/threading/placed_pool.h"

namespace infertune {

std::vector<std::string> PlacedPool::warnings() const {
  std::vector<std::string> all = plan.warnings;
  if (pool) {
    for (std::string& warning : pool->warnings()) all.push_back(std::move(warning));
  }
  return all;
}

Result<std::unique_ptr<PlacedPool>> start_placed_pool(const PlacementOptions& options) {
  auto topology = Topology::load_machine();
  if (!topology) return topology.error();
  auto plan = plan_placement(*topology, options);
  if (!plan) return plan.error();
  auto placed = std::make_unique<PlacedPool>(PlacedPool{std::move(*topology), std::move(*plan), nullptr});
  auto pool = ThreadPool::create(pool_config(placed->plan, &placed->topology));
  if (!pool) return pool.error();
  placed->pool = std::move(*pool);
  return placed;
}

}  // namespace infertune
