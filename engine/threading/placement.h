#pragma once
// From a topology and the user's placement flags to a plan: for every worker thread of the pool, the CPUs
// it may run on and the NUMA node its memory binds to. Pure computation: nothing is bound here (see
// engine/threading/binding.h and thread_pool.h), so any plan can be tested on a synthetic topology.
//
// The rules, in order:
//  1. Start from the topology's allowed PUs. -C keeps only the CPUs of the mask (CPUs not on this machine
//     are ignored, with a warning); a mask that keeps none is an error.
//  2. --numa numactl keeps only the CPUs the process started with (sched_getaffinity at start); so does the
//     default (no --numa, no -C), which is what a thread inherits anyway, so taskset keeps working.
//     --numa isolate keeps only the NUMA node the process started on. --numa distribute keeps every node.
//  3. The allowed PUs are ordered: first PU of every physical core before any SMT sibling, and under
//     distribute, round robin over the NUMA nodes within each of those ranks, so that the first k workers
//     (a call with fewer threads, -t < -tb) are as balanced as all of them.
//  4. --cpu-strict 1: worker i runs on the i-th PU of that order only, its memory on that PU's node; more
//     threads than allowed PUs is an error. --cpu-strict 0: a worker may run on every allowed PU (under
//     distribute: every allowed PU of the node its turn in the order gives it) and its memory binds to a
//     node only when those PUs lie in one node.
//  5. -t <= 0 means the number of physical cores with an allowed PU; -tb <= 0 means -t.
// Worker 0 is the thread that calls the pool (it works too: n_threads counts it).
#include <optional>
#include <string>
#include <vector>

#include "engine/threading/cpu_set.h"
#include "engine/threading/placement_options.h"
#include "engine/threading/process_cpu_state.h"
#include "engine/threading/topology.h"
#include "kernels/result.h"

namespace infertune {

struct WorkerPlacement {
  CpuSet cpus;                        // OS indices the thread may run on; one CPU under --cpu-strict 1
  std::optional<unsigned> numa_node;  // OS index of the node its memory binds to; absent: not bound
};

struct PlacementPlan {
  unsigned n_threads = 1;        // -t, resolved: threads for one-token steps
  unsigned n_threads_batch = 1;  // -tb, resolved: threads for prompt / batch steps
  NumaMode numa = NumaMode::none;
  bool cpu_strict = false;
  ThreadPriority priority = ThreadPriority::normal;
  int poll = kDefaultPoll;
  CpuSet allowed;                        // the CPUs left after -C and --numa
  std::vector<WorkerPlacement> workers;  // [max(n_threads, n_threads_batch)]; [0] is the calling thread
  std::vector<std::string> warnings;     // things ignored or likely slow, for the log

  unsigned n_workers() const { return static_cast<unsigned>(workers.size()); }
  // llama.cpp's rule: a batch of one token uses -t, a bigger one -tb.
  unsigned threads_for(size_t n_tokens) const { return n_tokens > 1 ? n_threads_batch : n_threads; }
  // One line per worker: "thread 1: CPU 2, memory node 0".
  std::string describe() const;
};

// Errors name the flag: an unusable -C, more threads than CPUs under --cpu-strict 1, a --numa mode that
// leaves no CPU, an out-of-range --prio or --poll.
Result<PlacementPlan> plan_placement(const Topology& topology, const PlacementOptions& options,
                                     const ProcessCpuState& process = ProcessCpuState::at_start());

}  // namespace infertune
