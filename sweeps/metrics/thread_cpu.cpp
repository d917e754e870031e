#include "sweeps/metrics/thread_cpu.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace infertune {

namespace {

std::vector<pid_t> list_thread_ids() {
  std::vector<pid_t> tids;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", error)) {
    const std::string name = entry.path().filename().string();
    char* end = nullptr;
    const long tid = std::strtol(name.c_str(), &end, 10);
    if (end != name.c_str() && *end == '\0') tids.push_back(static_cast<pid_t>(tid));
  }
  std::sort(tids.begin(), tids.end());
  return tids;
}

// schedstat's first field is the time on CPU in ns (kernel with CONFIG_SCHED_INFO, the common case).
std::optional<int64_t> schedstat_ns(pid_t tid) {
  std::ifstream file("/proc/self/task/" + std::to_string(tid) + "/schedstat");
  long long ns = 0;
  if (!(file >> ns)) return std::nullopt;
  return ns;
}

// utime + stime (fields 14 and 15 of stat, in clock ticks), after the command name, which may hold spaces
// and parentheses, so it is skipped up to its last ')'.
std::optional<int64_t> stat_ticks_ns(pid_t tid) {
  std::ifstream file("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const size_t name_end = text.rfind(')');
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(name_end + 1));
  std::string field;
  for (int index = 3; index <= 13; ++index) fields >> field;  // state .. cmajflt
  long long utime = 0, stime = 0;
  if (!(fields >> utime >> stime)) return std::nullopt;
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (ticks_per_second <= 0) return std::nullopt;
  return (utime + stime) * (1'000'000'000LL / ticks_per_second);
}

std::optional<int64_t> thread_cpu_ns(pid_t tid) {
  if (auto ns = schedstat_ns(tid)) return ns;
  return stat_ticks_ns(tid);
}

int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

pid_t current_thread_id() { return static_cast<pid_t>(syscall(SYS_gettid)); }

std::optional<double> ThreadCpuUsage::busy_share_of(pid_t tid) const {
  for (const auto& thread : threads) {
    if (thread.tid == tid) return thread.busy_share;
  }
  return std::nullopt;
}

std::optional<double> ThreadCpuUsage::mean_busy_share_of(const std::vector<pid_t>& tids) const {
  double sum = 0;
  int count = 0;
  for (pid_t tid : tids) {
    if (auto share = busy_share_of(tid)) {
      sum += *share;
      ++count;
    }
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

void ThreadCpuMeter::start() {
  at_start_.clear();
  for (pid_t tid : list_thread_ids()) {
    if (auto ns = thread_cpu_ns(tid)) at_start_.push_back({tid, *ns});
  }
  start_wall_ns_ = monotonic_ns();
}

ThreadCpuUsage ThreadCpuMeter::stop() const {
  ThreadCpuUsage usage;
  const int64_t wall_ns = monotonic_ns() - start_wall_ns_;
  usage.wall_seconds = static_cast<double>(wall_ns) * 1e-9;
  if (wall_ns <= 0) return usage;

  double busy_sum = 0;
  int busy_threads = 0;
  for (pid_t tid : list_thread_ids()) {
    const auto now_ns = thread_cpu_ns(tid);
    if (!now_ns) continue;  // exited between listing and reading
    const auto before = std::lower_bound(at_start_.begin(), at_start_.end(), tid,
                                         [](const ThreadTime& time, pid_t id) { return time.tid < id; });
    // A tid not seen at start is a thread started meanwhile (its whole CPU time is in the interval). A
    // reused tid would look like a counter gone backwards; it is counted from 0 too.
    int64_t start_ns = (before != at_start_.end() && before->tid == tid) ? before->cpu_ns : 0;
    if (start_ns > *now_ns) start_ns = 0;
    ThreadBusyShare share;
    share.tid = tid;
    share.cpu_seconds = static_cast<double>(*now_ns - start_ns) * 1e-9;
    share.busy_share = share.cpu_seconds / usage.wall_seconds;
    if (share.cpu_seconds > 0) {
      busy_sum += share.busy_share;
      ++busy_threads;
    }
    usage.threads.push_back(share);
  }
  if (busy_threads > 0) usage.mean_busy_share = busy_sum / busy_threads;
  return usage;
}

}  // namespace infertune
