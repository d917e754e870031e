#include "engine/threading/barrier.h"

namespace infertune {

void SpinBarrier::arrive_and_wait(uint32_t n_threads, const SpinPolicy& policy) {
  if (n_threads <= 1) return;
  // Read the generation before arriving: once we have arrived the last thread may bump it at any time.
  const uint32_t generation = generation_.value.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_threads) {
    arrived_.store(0, std::memory_order_relaxed);  // published by the bump below
    generation_.value.fetch_add(1, std::memory_order_seq_cst);
    generation_.wake_all();
    return;
  }
  generation_.wait_while_equal(generation, policy);
}

}  // namespace infertune
