#include "bench/probe/pinned_threads.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <system_error>
#include <thread>

namespace infertune {
namespace {

void pin_current_thread(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);  // best effort (see the header)
}

}  // namespace

Result<std::vector<double>> PinnedThreads::run(const std::function<void(unsigned)>& setup,
                                               const std::function<void(unsigned, unsigned)>& work,
                                               unsigned repetitions) const {
  const unsigned n = size();
  if (n == 0) return fail("no CPUs to run measurement threads on");
  std::vector<double> seconds(repetitions, 0.0);
  std::atomic<bool> abandoned{false};
  std::barrier sync(static_cast<std::ptrdiff_t>(n));

  // Thread 0 times each repetition between the barrier that starts it and the one that ends it.
  auto body = [&](unsigned t) {
    pin_current_thread(cpus_[t]);
    sync.arrive_and_wait();  // every thread started (or the run was abandoned)
    if (abandoned.load()) return;
    setup(t);
    for (unsigned rep = 0; rep < repetitions; ++rep) {
      sync.arrive_and_wait();
      const auto start = std::chrono::steady_clock::now();
      work(t, rep);
      sync.arrive_and_wait();
      if (t == 0) seconds[rep] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  };

  // Every thread is a new one, so the caller's own CPU affinity is left as it was.
  std::vector<std::thread> threads;
  threads.reserve(n);
  try {
    for (unsigned t = 0; t < n; ++t) threads.emplace_back(body, t);
  } catch (const std::system_error& e) {
    // The started threads wait at the first barrier; arrive in place of the missing ones so they can leave.
    abandoned = true;
    for (size_t missing = threads.size(); missing < n; ++missing) sync.arrive_and_drop();
    for (auto& th : threads) th.join();
    return fail("cannot start measurement thread {} of {}: {}", threads.size() + 1, n, e.what());
  }
  for (auto& th : threads) th.join();
  return seconds;
}

}  // namespace infertune
