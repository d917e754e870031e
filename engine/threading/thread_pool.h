#pragma once
// The engine's persistent thread pool: workers are started once, placed per a PlacementPlan (CPU binding,
// memory binding, priority) and then woken for each job.
//
// One pool serves both -t and -tb: it is sized max(-t, -tb) and each call says how many threads it uses
// (plan.threads_for(n_tokens)); the others stay asleep. Because the plan orders workers so that every
// prefix is balanced (physical cores first, NUMA nodes in turn), the first k workers are the right k. One
// pool rather than two keeps one set of threads per core: two pools would leave idle threads of one
// spinning on the cores the other works on.
//
// Contract:
//  - The calling thread takes part as thread 0; a job of n threads wakes n - 1 workers. No oversubscription.
//  - One job at a time. run() from inside a task (nested), or from a second thread while a job runs, returns
//    an error at once instead of deadlocking. Calls may come from different threads one after another.
//  - Tasks are noexcept by contract. If one throws anyway, the exception is caught at the pool boundary, the
//    rest of the job still runs, and run() returns an error with its message; nothing crosses a thread.
//    (A task that throws between barrier() calls leaves the others waiting: don't.)
//  - barrier() inside a task waits for every thread of the current job; every thread of the job must call
//    it the same number of times. Outside a task it does nothing.
//  - Waiting (workers for work, the caller for workers, barrier()) spins per --poll, then sleeps on a futex.
//    A pool with more threads than CPUs to run them on sleeps at once whatever --poll says: a spinning
//    thread there takes the CPU from the very thread it waits for.
#include <atomic>
#include <cstddef>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/threading/barrier.h"
#include "engine/threading/cpu_set.h"
#include "engine/threading/function_ref.h"
#include "engine/threading/placement.h"
#include "engine/threading/spin_wait.h"
#include "engine/threading/topology.h"
#include "kernels/result.h"

namespace infertune {

struct ThreadPoolConfig {
  unsigned n_threads = 1;  // pool size, the calling thread included
  int poll = kDefaultPoll;
  ThreadPriority priority = ThreadPriority::normal;  // applied to the workers (the caller keeps its own)
  std::vector<WorkerPlacement> placement;            // empty: no binding; else [n_threads], [0] = caller
  const Topology* topology = nullptr;  // the running machine's, for binding; null: no binding. Outlives the pool.
  // Bind the constructing thread per placement[0] (CPU only; its earlier binding is restored when the pool
  // is destroyed on the same thread). Its memory policy is left alone: it allocates the model and caches.
  bool bind_calling_thread = true;
};

// A pool of plan.n_workers() threads placed per the plan, bound through `machine` (null: plan only).
ThreadPoolConfig pool_config(const PlacementPlan& plan, const Topology* machine);

class ThreadPool {
 public:
  using RunFn = FunctionRef<void(unsigned thread, unsigned n_threads)>;
  using TaskFn = FunctionRef<void(size_t task, unsigned thread)>;
  using RangeFn = FunctionRef<void(size_t begin, size_t end)>;

  static Result<std::unique_ptr<ThreadPool>> create(const ThreadPoolConfig& config);
  ~ThreadPool();  // wakes and joins the workers; must not run while a job does
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return size_; }
  int poll() const { return poll_; }  // the polling level in effect (see the contract above)
  // Binding and priority problems met when the workers started (for the log).
  std::vector<std::string> warnings() const;

  // fn(thread, n_threads) on threads 0..n_threads-1 at once (thread 0 is the caller); returns when all
  // are done. n_threads in [1, size()]. For static splits: see split_range (engine/threading/static_split.h).
  Status run(unsigned n_threads, RunFn fn);
  Status run(RunFn fn) { return run(size_, fn); }

  // fn(task, thread) exactly once for every task in [0, n_tasks), handed out dynamically in small chunks
  // to min(n_threads, n_tasks) threads; for uneven tasks (attention heads, say).
  Status parallel_for(size_t n_tasks, unsigned n_threads, TaskFn fn);
  Status parallel_for(size_t n_tasks, TaskFn fn) { return parallel_for(n_tasks, size_, fn); }

  // The static form of engine/threading/parallel_for.h: [0, n_items) in at most n_threads contiguous ranges
  // of at least min_chunk items, balanced to within one item, fn(begin, end) on each.
  Status parallel_ranges(size_t n_items, unsigned n_threads, RangeFn fn, size_t min_chunk = 1);

  // Inside a task: waits for every thread of the current job (see the contract above).
  void barrier();

 private:
  explicit ThreadPool(const ThreadPoolConfig& config);
  Status start_workers();
  void worker_main(unsigned index) noexcept;
  void execute(unsigned index) noexcept;
  void post_to_workers(unsigned n_threads);
  void stop_workers() noexcept;
  void record_failure(std::string message);
  Status check_call(unsigned n_threads) const;
  void bind_caller();

  const unsigned size_;
  const int poll_;
  const SpinPolicy policy_;
  const ThreadPoolConfig config_;
  std::vector<std::thread> threads_;       // [size_ - 1]: worker i + 1
  std::unique_ptr<WaitWord[]> mailboxes_;  // [size_]: worker i sleeps on mailboxes_[i]; [0] unused
  WaitWord pending_;                       // workers of the current job not yet done
  SpinBarrier barrier_;
  std::latch started_;  // workers placed and ready
  std::atomic<bool> busy_{false};
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};

  // The current job. Written by the caller before it posts to the mailboxes (release), read by workers
  // after they see the post (acquire).
  uint32_t epoch_ = 0;
  const RunFn* job_fn_ = nullptr;
  unsigned job_threads_ = 0;

  mutable std::mutex mutex_;  // guards failure_ and warnings_
  std::string failure_;
  std::vector<std::string> warnings_;

  std::optional<CpuSet> caller_saved_cpus_;
  std::thread::id caller_id_;
};

}  // namespace infertune
