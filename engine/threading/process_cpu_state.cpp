#include "engine/threading/process_cpu_state.h"

#include <sched.h>

#include <vector>

namespace infertune {
namespace {

CpuSet read_affinity() {
  // Start with a set big enough for kMaxCpuIndex; CPU_ALLOC sizes are in bits.
  constexpr size_t kCpus = kMaxCpuIndex + 1;
  cpu_set_t* set = CPU_ALLOC(kCpus);
  if (set == nullptr) return CpuSet();
  const size_t bytes = CPU_ALLOC_SIZE(kCpus);
  CPU_ZERO_S(bytes, set);
  std::vector<unsigned> cpus;
  if (sched_getaffinity(0, bytes, set) == 0) {
    for (unsigned cpu = 0; cpu < kCpus; ++cpu) {
      if (CPU_ISSET_S(cpu, bytes, set)) cpus.push_back(cpu);
    }
  }
  CPU_FREE(set);
  return CpuSet(std::move(cpus));
}

}  // namespace

ProcessCpuState ProcessCpuState::current() {
  ProcessCpuState state;
  state.start_affinity = read_affinity();
  const int cpu = sched_getcpu();
  if (cpu >= 0) state.start_cpu = static_cast<unsigned>(cpu);
  return state;
}

const ProcessCpuState& ProcessCpuState::at_start() {
  static const ProcessCpuState state = current();
  return state;
}

namespace {
// Takes the reading during static initialisation of this library, i.e. before main() pins anything
// (unless another static initialiser asked first, which then got the reading of its own moment).
[[maybe_unused]] const bool kReadAtStart = (ProcessCpuState::at_start(), true);
}  // namespace

}  // namespace infertune
