#include "engine/threading/thread_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <system_error>

#include "engine/threading/binding.h"
#include "engine/threading/process_cpu_state.h"
#include "engine/threading/static_split.h"
#include "engine/threading/thread_priority.h"

namespace infertune {
namespace {

// The pool whose task this thread is running (workers: always their own pool). Non-null means a call into
// any pool from here would nest.
thread_local const ThreadPool* t_running_pool = nullptr;

// parallel_for hands out this many chunks per thread: small enough to even out uneven tasks, big enough
// that the shared counter is not hammered.
constexpr size_t kChunksPerThread = 4;

// The CPUs the pool's threads can run on: those of their placements, else those the creating thread may
// use (which the workers inherit).
size_t cpus_for_threads(const ThreadPoolConfig& config) {
  CpuSet cpus;
  for (const WorkerPlacement& placement : config.placement) cpus = cpus.unite(placement.cpus);
  if (cpus.empty()) cpus = ProcessCpuState::current().start_affinity;
  return cpus.size();
}

int effective_poll(const ThreadPoolConfig& config) {
  const size_t cpus = cpus_for_threads(config);
  return cpus > 0 && config.n_threads > cpus ? 0 : config.poll;
}

}  // namespace

ThreadPoolConfig pool_config(const PlacementPlan& plan, const Topology* machine) {
  ThreadPoolConfig config;
  config.n_threads = plan.n_workers();
  config.poll = plan.poll;
  config.priority = plan.priority;
  config.placement = plan.workers;
  config.topology = machine;
  return config;
}

Result<std::unique_ptr<ThreadPool>> ThreadPool::create(const ThreadPoolConfig& config) {
  if (config.n_threads == 0 || config.n_threads > static_cast<unsigned>(kMaxThreads)) {
    return fail("thread pool: {} threads requested; expected 1..{}", config.n_threads, kMaxThreads);
  }
  if (!config.placement.empty() && config.placement.size() != config.n_threads) {
    return fail("thread pool: a placement for {} threads given to a pool of {}", config.placement.size(),
                config.n_threads);
  }
  std::unique_ptr<ThreadPool> pool(new ThreadPool(config));
  if (pool->poll_ != config.poll) {
    pool->warnings_.push_back(fmt::format("{} threads on {} CPUs: --poll {} ignored, waiting threads sleep at once",
                                          config.n_threads, cpus_for_threads(config), config.poll));
  }
  if (Status s = pool->start_workers(); !s) return s.error();
  pool->started_.wait();
  pool->bind_caller();
  return pool;
}

ThreadPool::ThreadPool(const ThreadPoolConfig& config)
    : size_(config.n_threads),
      poll_(effective_poll(config)),
      policy_(poll_),
      config_(config),
      mailboxes_(new WaitWord[config.n_threads]),
      started_(static_cast<std::ptrdiff_t>(config.n_threads - 1)),
      caller_id_(std::this_thread::get_id()) {}

Status ThreadPool::start_workers() {
  threads_.reserve(size_ - 1);
  for (unsigned i = 1; i < size_; ++i) {
    try {
      threads_.emplace_back([this, i] { worker_main(i); });
    } catch (const std::system_error& e) {
      // The started workers never wait on `started_`'s remaining count, so stopping them is safe.
      stop_workers();
      return fail("thread pool: cannot start worker {} of {}: {}", i, size_ - 1, e.what());
    }
  }
  return {};
}

ThreadPool::~ThreadPool() {
  stop_workers();
  if (caller_saved_cpus_ && std::this_thread::get_id() == caller_id_) {
    (void)bind_current_thread_cpus(*config_.topology, *caller_saved_cpus_);
  }
}

void ThreadPool::stop_workers() noexcept {
  stop_.store(true, std::memory_order_release);
  ++epoch_;
  for (unsigned i = 1; i <= threads_.size(); ++i) {
    mailboxes_[i].value.store(epoch_, std::memory_order_seq_cst);
    mailboxes_[i].wake_all();
  }
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

void ThreadPool::bind_caller() {
  if (config_.topology == nullptr || config_.placement.empty() || !config_.bind_calling_thread) return;
  auto saved = current_thread_cpus(*config_.topology);
  if (saved) caller_saved_cpus_ = std::move(*saved);
  if (auto warning = bind_current_thread_cpus(*config_.topology, config_.placement[0].cpus)) {
    std::lock_guard lock(mutex_);
    warnings_.push_back("thread 0 (caller): " + *warning);
  }
}

void ThreadPool::worker_main(unsigned index) noexcept {
  t_running_pool = this;
  std::vector<std::string> warnings;
  if (config_.topology != nullptr && !config_.placement.empty()) {
    warnings = apply_placement_to_current_thread(*config_.topology, config_.placement[index]);
  }
  if (auto warning = apply_thread_priority(config_.priority)) warnings.push_back(std::move(*warning));
  if (!warnings.empty()) {
    std::lock_guard lock(mutex_);
    for (std::string& w : warnings) warnings_.push_back(fmt::format("thread {}: {}", index, w));
  }
  started_.count_down();
  uint32_t seen = 0;
  for (;;) {
    seen = mailboxes_[index].wait_while_equal(seen, policy_);
    if (stop_.load(std::memory_order_acquire)) return;
    execute(index);
    if (pending_.value.fetch_sub(1, std::memory_order_seq_cst) == 1) pending_.wake_all();
  }
}

void ThreadPool::execute(unsigned index) noexcept {
  try {
    (*job_fn_)(index, job_threads_);
  } catch (const std::exception& e) {
    record_failure(fmt::format("a task threw on thread {}: {}", index, e.what()));
  } catch (...) {
    record_failure(fmt::format("a task threw on thread {} (not a std::exception)", index));
  }
}

void ThreadPool::record_failure(std::string message) {
  std::lock_guard lock(mutex_);
  if (failure_.empty()) failure_ = "thread pool: " + std::move(message);
  failed_.store(true, std::memory_order_relaxed);
}

std::vector<std::string> ThreadPool::warnings() const {
  std::lock_guard lock(mutex_);
  return warnings_;
}

Status ThreadPool::check_call(unsigned n_threads) const {
  if (t_running_pool != nullptr) {
    return fail("thread pool: called from inside a pool task; nested parallel calls are not supported");
  }
  if (n_threads == 0 || n_threads > size_) {
    return fail("thread pool: {} threads requested; this pool has {}", n_threads, size_);
  }
  return {};
}

void ThreadPool::post_to_workers(unsigned n_threads) {
  ++epoch_;
  for (unsigned i = 1; i < n_threads; ++i) {
    mailboxes_[i].value.store(epoch_, std::memory_order_seq_cst);
    mailboxes_[i].wake_all();
  }
}

Status ThreadPool::run(unsigned n_threads, RunFn fn) {
  if (Status s = check_call(n_threads); !s) return s;
  if (busy_.exchange(true, std::memory_order_acquire)) {
    return fail("thread pool: run() while another thread's job is running; one job at a time");
  }
  job_fn_ = &fn;
  job_threads_ = n_threads;
  pending_.value.store(n_threads - 1, std::memory_order_relaxed);  // published by the posts
  post_to_workers(n_threads);
  t_running_pool = this;
  execute(0);
  t_running_pool = nullptr;
  for (uint32_t left = pending_.value.load(std::memory_order_acquire); left != 0;) {
    left = pending_.wait_while_equal(left, policy_);
  }
  Status result;
  if (failed_.load(std::memory_order_relaxed)) {
    std::lock_guard lock(mutex_);
    result = Error{std::exchange(failure_, std::string())};
    failed_.store(false, std::memory_order_relaxed);
  }
  busy_.store(false, std::memory_order_release);
  return result;
}

void ThreadPool::barrier() {
  if (t_running_pool != this) return;
  barrier_.arrive_and_wait(job_threads_, policy_);
}

Status ThreadPool::parallel_for(size_t n_tasks, unsigned n_threads, TaskFn fn) {
  if (Status s = check_call(n_threads); !s) return s;
  if (n_tasks == 0) return {};
  const auto used = static_cast<unsigned>(std::min<size_t>(n_threads, n_tasks));
  const size_t chunk = std::max<size_t>(1, n_tasks / (size_t{used} * kChunksPerThread));
  alignas(64) std::atomic<size_t> next{0};
  return run(used, [&](unsigned thread, unsigned) {
    for (size_t begin = next.fetch_add(chunk, std::memory_order_relaxed); begin < n_tasks;
         begin = next.fetch_add(chunk, std::memory_order_relaxed)) {
      const size_t end = std::min(n_tasks, begin + chunk);
      for (size_t task = begin; task < end; ++task) fn(task, thread);
    }
  });
}

Status ThreadPool::parallel_ranges(size_t n_items, unsigned n_threads, RangeFn fn, size_t min_chunk) {
  if (Status s = check_call(n_threads); !s) return s;
  if (n_items == 0) return {};
  const size_t max_parts = std::max<size_t>(1, n_items / std::max<size_t>(1, min_chunk));
  const auto parts = static_cast<unsigned>(std::min<size_t>(n_threads, max_parts));
  return run(parts, [&](unsigned thread, unsigned n) {
    const IndexRange range = split_range(n_items, n, thread);
    if (!range.empty()) fn(range.begin, range.end);
  });
}

}  // namespace infertune
