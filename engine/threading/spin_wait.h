#pragma once
// Waiting for a 32-bit word to change: spin for a while (cheap wake-up, burns the core), then sleep on a
// Linux futex (costs a system call to wake, frees the core). `--poll` caps the while:
//   0      sleep at once
//   1..99  spin up to poll x kSpinPerPollLevel before sleeping (poll 50, llama.cpp's default: about 1 ms,
//          longer than the gaps between the operations of a forward pass, shorter than a user's pause)
//   100    never sleep (yielding the core every 64 pauses, so that a partner queued behind it can run)
// The budget is in time rather than in pause instructions because a pause costs 10 to 150 cycles
// depending on the CPU. A pool with more threads than CPUs does not spin at all (see thread_pool.h).
//
// Under that cap each thread spins only about as long as its waits usually take, and below --poll 100 never
// calls sched_yield: see adaptive_spin.h for why, and what it measured.
//
// A WaitWord pairs the word with a count of sleepers, so that waking costs a system call only when someone
// actually sleeps. The protocol (all seq_cst): the waiter announces itself in `sleepers`, re-reads the word
// and sleeps only if it is unchanged (the kernel re-checks atomically); the waker changes the word, then
// reads `sleepers`. One of the two always sees the other, so no wake-up is lost.
#include <atomic>
#include <chrono>
#include <cstdint>

namespace infertune {

inline constexpr std::chrono::microseconds kSpinPerPollLevel{20};

class SpinPolicy {
 public:
  explicit SpinPolicy(int poll = 50);
  bool spins_forever() const { return forever_; }
  std::chrono::nanoseconds budget() const { return budget_; }

 private:
  bool forever_ = false;
  std::chrono::nanoseconds budget_{0};
};

struct alignas(64) WaitWord {
  std::atomic<uint32_t> value{0};
  std::atomic<uint32_t> sleepers{0};

  // Blocks while value == old; returns the new value. Spurious futex returns are absorbed.
  uint32_t wait_while_equal(uint32_t old, const SpinPolicy& policy);
  // Wakes every sleeper; call after changing value. Cheap when nobody sleeps.
  void wake_all();
};

// One spin-loop step: a pause instruction where the CPU has one.
void cpu_relax();

}  // namespace infertune
