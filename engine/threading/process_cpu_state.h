#pragma once
// Where the process was allowed to run and where it ran when it started: `--numa numactl` keeps to the
// first, `--numa isolate` to the NUMA node of the second (llama.cpp semantics). Both are read once, before
// main(), so that pinning threads later cannot change the answer.
#include <optional>

#include "engine/threading/cpu_set.h"

namespace infertune {

struct ProcessCpuState {
  CpuSet start_affinity;              // sched_getaffinity at start (taskset / numactl / cgroup)
  std::optional<unsigned> start_cpu;  // sched_getcpu at start; absent when unknown

  // The values captured at program start (or, if read before static initialisation ran, now).
  static const ProcessCpuState& at_start();
  // Read now, for the calling thread.
  static ProcessCpuState current();
};

}  // namespace infertune
