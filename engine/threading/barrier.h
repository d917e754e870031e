#pragma once
// A reusable barrier for a fixed group of threads: the last to arrive releases the others. Waiting follows
// the SpinPolicy (spin, then futex). Reuse is safe without any reset: a round ends by bumping the
// generation, and a thread can only arrive for the next round after it saw that bump.
#include <atomic>
#include <cstdint>

#include "engine/threading/spin_wait.h"

namespace infertune {

class SpinBarrier {
 public:
  // Every one of the n_threads threads of the group calls this once per round, with the same n_threads.
  // Writes made before the call are visible to every thread of the group after it.
  void arrive_and_wait(uint32_t n_threads, const SpinPolicy& policy);

 private:
  alignas(64) std::atomic<uint32_t> arrived_{0};
  WaitWord generation_;
};

}  // namespace infertune
