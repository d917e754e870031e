#include "engine/threading/spin_wait.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include "engine/threading/adaptive_spin.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace infertune {
namespace {

constexpr uint32_t kPausesPerClockCheck = 64;
constexpr uint32_t kPausesPerYield = 64;

// This thread's typical wait that ended while it spun (see adaptive_spin_budget).
thread_local std::chrono::nanoseconds t_typical_wait = kFirstTypicalWait;

// std::atomic<uint32_t> is a plain, lock-free 32-bit word here, which is what the futex needs.
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free);

uint32_t* futex_address(std::atomic<uint32_t>& word) { return reinterpret_cast<uint32_t*>(&word); }

void futex_wait(std::atomic<uint32_t>& word, uint32_t old) {
  syscall(SYS_futex, futex_address(word), FUTEX_WAIT_PRIVATE, old, nullptr, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, futex_address(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// --poll 100: a waiter that never sleeps yields now and then, or a partner queued on its core would wait for
// the end of its time slice.
bool spin_forever_while_equal(const std::atomic<uint32_t>& word, uint32_t old) {
  for (uint32_t spins = 1; word.load(std::memory_order_acquire) == old; ++spins) {
    cpu_relax();
    if (spins % kPausesPerYield == 0) sched_yield();
  }
  return true;
}

// Spins until the word changes or this thread's budget (adaptive_spin_budget) runs out; returns whether it
// changed.
bool spin_while_equal(const std::atomic<uint32_t>& word, uint32_t old, const SpinPolicy& policy) {
  if (policy.spins_forever()) return spin_forever_while_equal(word, old);
  if (policy.budget().count() == 0) return false;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + adaptive_spin_budget(policy, t_typical_wait);
  for (uint32_t spins = 1;; ++spins) {
    if (word.load(std::memory_order_acquire) != old) {
      t_typical_wait = next_typical_wait(t_typical_wait, std::chrono::steady_clock::now() - start);
      return true;
    }
    cpu_relax();
    if (spins % kPausesPerClockCheck == 0 && std::chrono::steady_clock::now() >= deadline) return false;
  }
}

}  // namespace

SpinPolicy::SpinPolicy(int poll) {
  poll = std::clamp(poll, 0, 100);
  forever_ = poll == 100;
  budget_ = std::chrono::duration_cast<std::chrono::nanoseconds>(kSpinPerPollLevel * poll);
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

uint32_t WaitWord::wait_while_equal(uint32_t old, const SpinPolicy& policy) {
  if (!spin_while_equal(value, old, policy)) {
    while (value.load(std::memory_order_seq_cst) == old) {
      sleepers.fetch_add(1, std::memory_order_seq_cst);
      if (value.load(std::memory_order_seq_cst) == old) futex_wait(value, old);
      sleepers.fetch_sub(1, std::memory_order_seq_cst);
    }
  }
  return value.load(std::memory_order_acquire);
}

void WaitWord::wake_all() {
  if (sleepers.load(std::memory_order_seq_cst) > 0) futex_wake_all(value);
}

}  // namespace infertune
