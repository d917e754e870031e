#pragma once
// CPU busy share of every thread of this process over an interval: the thread's CPU time (on-CPU ns from
// /proc/self/task/TID/schedstat, falling back to utime + stime from .../stat in clock ticks) divided by the
// wall time between start() and stop(). A spinning thread is ~1, a sleeping one ~0. Threads that appear
// after start() count from 0; threads that exit before stop() are lost (their time cannot be read any more).
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace infertune {

struct ThreadBusyShare {
  pid_t tid = 0;
  double cpu_seconds = 0;  // CPU time the thread used between start and stop
  double busy_share = 0;   // cpu_seconds / wall_seconds (may slightly exceed 1 from clock granularity)
};

struct ThreadCpuUsage {
  double wall_seconds = 0;
  std::vector<ThreadBusyShare> threads;  // every thread alive at stop(), ordered by tid
  // The mean busy share over threads that used any CPU at all (cpu_seconds > 0): idle helper threads
  // (a logger, a watchdog) would otherwise dilute it. nullopt when no thread was busy or nothing was readable.
  std::optional<double> mean_busy_share;

  // The share of one thread, nullopt when it was not alive at stop().
  std::optional<double> busy_share_of(pid_t tid) const;
  // The mean share over the given threads (a thread pool's workers) that were alive at stop(); nullopt
  // when none was.
  std::optional<double> mean_busy_share_of(const std::vector<pid_t>& tids) const;
};

class ThreadCpuMeter {
 public:
  void start();
  ThreadCpuUsage stop() const;

 private:
  struct ThreadTime {
    pid_t tid;
    int64_t cpu_ns;
  };
  std::vector<ThreadTime> at_start_;  // ordered by tid
  int64_t start_wall_ns_ = 0;
};

// The calling thread's kernel id (gettid), for matching a ThreadBusyShare to a thread.
pid_t current_thread_id();

}  // namespace infertune
