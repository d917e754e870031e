#include "engine/threading/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace infertune {
namespace {

// The NUMA node the process started on: that of its start CPU, else of its first allowed CPU, else the
// first node.
unsigned start_node(const Topology& topology, const ProcessCpuState& process) {
  if (process.start_cpu) {
    if (const PuInfo* pu = topology.find_pu(*process.start_cpu)) return pu->numa_node;
  }
  for (unsigned cpu : process.start_affinity.cpus()) {
    if (const PuInfo* pu = topology.find_pu(cpu)) return pu->numa_node;
  }
  return topology.pus().front().numa_node;
}

CpuSet node_cpus(const Topology& topology, unsigned node_os_index) {
  for (const NumaNodeInfo& node : topology.numa_nodes()) {
    if (node.os_index == node_os_index) return node.cpus;
  }
  return CpuSet();
}

Result<CpuSet> apply_mask(const Topology& topology, const std::string& mask_text, std::vector<std::string>& warnings) {
  const CpuSet machine = topology.all_cpus();
  if (mask_text.empty()) return machine;
  auto mask = parse_cpu_mask(mask_text);
  if (!mask) return mask.error();
  const CpuSet kept = machine.intersect(*mask);
  if (kept.empty()) {
    return fail("-C/--cpu-mask '{}' selects CPUs {}, none of which this machine allows (CPUs {})", mask_text,
                mask->to_string(), machine.to_string());
  }
  if (const CpuSet ignored = mask->minus(machine); !ignored.empty()) {
    warnings.push_back(fmt::format("-C/--cpu-mask '{}': CPUs {} are not on this machine (or not allowed); ignored",
                                   mask_text, ignored.to_string()));
  }
  return kept;
}

Result<CpuSet> apply_numa_mode(const Topology& topology, const PlacementOptions& options,
                               const ProcessCpuState& process, CpuSet cpus) {
  switch (options.numa) {
    case NumaMode::none: {
      if (!options.cpu_mask.empty()) return cpus;  // an explicit mask overrides the inherited affinity
      const CpuSet inherited = cpus.intersect(process.start_affinity);
      return inherited.empty() ? cpus : inherited;
    }
    case NumaMode::numactl: {
      const CpuSet kept = cpus.intersect(process.start_affinity);
      if (kept.empty()) {
        return fail("--numa numactl: the CPUs the process started with ({}) include none of the allowed CPUs {}",
                    process.start_affinity.to_string(), cpus.to_string());
      }
      return kept;
    }
    case NumaMode::isolate: {
      const unsigned node = start_node(topology, process);
      const CpuSet kept = cpus.intersect(node_cpus(topology, node));
      if (kept.empty()) {
        return fail("--numa isolate: NUMA node {} (where the process started) has none of the allowed CPUs {}", node,
                    cpus.to_string());
      }
      return kept;
    }
    case NumaMode::distribute:
      break;
  }
  return cpus;
}

// The allowed PUs, physical cores first (rank 0 = the first allowed PU of its core), then siblings; under
// distribute, nodes take turns within each rank.
std::vector<PuInfo> order_pus(const Topology& topology, const CpuSet& allowed, bool distribute) {
  struct Ranked {
    PuInfo pu;
    unsigned rank;
    unsigned turn;  // within (rank, node) under distribute, else the logical position
    unsigned node_position;
  };
  std::map<unsigned, unsigned> node_position;
  for (const NumaNodeInfo& node : topology.numa_nodes()) node_position.emplace(node.os_index, node_position.size());
  std::map<unsigned, unsigned> rank_of_core;                       // allowed PUs seen so far per core
  std::map<std::pair<unsigned, unsigned>, unsigned> turn_in_node;  // (rank, node) -> PUs seen so far
  std::vector<Ranked> ranked;
  for (const PuInfo& pu : topology.pus()) {
    if (!allowed.contains(pu.os_index)) continue;
    const unsigned rank = rank_of_core[pu.core]++;
    const unsigned position = node_position[pu.numa_node];
    const unsigned turn = distribute ? turn_in_node[{rank, pu.numa_node}]++ : static_cast<unsigned>(ranked.size());
    ranked.push_back({pu, rank, turn, distribute ? position : 0});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    return std::tie(a.rank, a.turn, a.node_position) < std::tie(b.rank, b.turn, b.node_position);
  });
  std::vector<PuInfo> order;
  for (const Ranked& r : ranked) order.push_back(r.pu);
  return order;
}

unsigned count_cores(const std::vector<PuInfo>& pus) {
  std::vector<unsigned> cores;
  for (const PuInfo& pu : pus) cores.push_back(pu.core);
  std::sort(cores.begin(), cores.end());
  return static_cast<unsigned>(std::unique(cores.begin(), cores.end()) - cores.begin());
}

// The node all of `cpus` lie in, if there is one.
std::optional<unsigned> single_node(const Topology& topology, const CpuSet& cpus) {
  std::optional<unsigned> node;
  for (unsigned cpu : cpus.cpus()) {
    const PuInfo* pu = topology.find_pu(cpu);
    if (pu == nullptr || (node && *node != pu->numa_node)) return std::nullopt;
    node = pu->numa_node;
  }
  return node;
}

std::vector<WorkerPlacement> place_workers(const Topology& topology, const PlacementPlan& plan,
                                           const std::vector<PuInfo>& order, unsigned n_workers) {
  std::vector<WorkerPlacement> workers(n_workers);
  const std::optional<unsigned> allowed_node = single_node(topology, plan.allowed);
  for (unsigned i = 0; i < n_workers; ++i) {
    const PuInfo& turn = order[i % order.size()];
    WorkerPlacement& worker = workers[i];
    if (plan.cpu_strict) {
      worker.cpus = CpuSet({turn.os_index});
      worker.numa_node = turn.numa_node;
    } else if (plan.numa == NumaMode::distribute) {
      worker.cpus = plan.allowed.intersect(node_cpus(topology, turn.numa_node));
      worker.numa_node = turn.numa_node;
    } else {
      worker.cpus = plan.allowed;
      worker.numa_node = allowed_node;
    }
  }
  return workers;
}

}  // namespace

Result<PlacementPlan> plan_placement(const Topology& topology, const PlacementOptions& options,
                                     const ProcessCpuState& process) {
  if (Status s = validate(options); !s) return s.error();
  PlacementPlan plan;
  plan.numa = options.numa;
  plan.cpu_strict = options.cpu_strict;
  plan.priority = static_cast<ThreadPriority>(options.priority);
  plan.poll = options.poll;
  auto masked = apply_mask(topology, options.cpu_mask, plan.warnings);
  if (!masked) return masked.error();
  auto allowed = apply_numa_mode(topology, options, process, std::move(*masked));
  if (!allowed) return allowed.error();
  plan.allowed = std::move(*allowed);

  const std::vector<PuInfo> order = order_pus(topology, plan.allowed, options.numa == NumaMode::distribute);
  plan.n_threads = options.threads > 0 ? static_cast<unsigned>(options.threads) : count_cores(order);
  plan.n_threads_batch = options.threads_batch > 0 ? static_cast<unsigned>(options.threads_batch) : plan.n_threads;
  const unsigned n_workers = std::max(plan.n_threads, plan.n_threads_batch);
  const char* count_flag = plan.n_threads_batch > plan.n_threads ? "-tb/--threads-batch" : "-t/--threads";
  if (n_workers > order.size()) {
    if (options.cpu_strict) {
      return fail("{} {}: --cpu-strict 1 needs a CPU per thread, but only {} are allowed (CPUs {})", count_flag,
                  n_workers, order.size(), plan.allowed.to_string());
    }
    plan.warnings.push_back(fmt::format("{} {}: more threads than the {} allowed CPUs ({}); they will share them",
                                        count_flag, n_workers, order.size(), plan.allowed.to_string()));
  }
  plan.workers = place_workers(topology, plan, order, n_workers);
  return plan;
}

std::string PlacementPlan::describe() const {
  std::string out;
  for (size_t i = 0; i < workers.size(); ++i) {
    const WorkerPlacement& w = workers[i];
    out += fmt::format("thread {}: CPU{} {}, memory {}\n", i, w.cpus.size() == 1 ? "" : "s", w.cpus.to_string(),
                       w.numa_node ? fmt::format("node {}", *w.numa_node) : std::string("not bound"));
  }
  return out;
}

}  // namespace infertune
