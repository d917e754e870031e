#include "sweeps/metrics/perf_counters.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include <fmt/format.h>

namespace infertune {

namespace {

// Indexed like PerfCounters::Counter; cycles first: it leads each thread's group.
constexpr std::array<PerfEventSpec, 3> kHardwareEvents = {{
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    // The generic LLC read-miss event, mapped by the kernel to the CPU's own (PERF_COUNT_HW_CACHE_MISSES
    // would be "misses of some cache", whose meaning differs between vendors).
    {"llc_misses", PERF_TYPE_HW_CACHE,
     PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16)},
}};

int open_event(const PerfEventSpec& spec, pid_t tid, int group_fd) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = spec.type;
  attr.config = spec.config;
  attr.disabled = group_fd == -1 ? 1 : 0;  // members follow their leader, which starts disabled
  attr.inherit = 1;
  attr.exclude_kernel = 1;  // what perf_event_paranoid 2 (the default) allows an unprivileged process
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC));
}

std::vector<pid_t> process_thread_ids() {
  std::vector<pid_t> tids;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", error)) {
    char* end = nullptr;
    const std::string name = entry.path().filename().string();
    const long tid = std::strtol(name.c_str(), &end, 10);
    if (end != name.c_str() && *end == '\0') tids.push_back(static_cast<pid_t>(tid));
  }
  return tids;
}

std::string paranoid_setting() {
  std::ifstream file("/proc/sys/kernel/perf_event_paranoid");
  std::string value;
  if (!(file >> value)) return "unreadable";
  return value;
}

std::string open_failure(const char* counter, int error_number) {
  std::string reason = fmt::format("perf_event_open({}): {}", counter, std::strerror(error_number));
  if (error_number == EACCES || error_number == EPERM) {
    reason += fmt::format(" (kernel.perf_event_paranoid = {})", paranoid_setting());
  } else if (error_number == ENOENT || error_number == EOPNOTSUPP || error_number == ENODEV) {
    reason += " (no such hardware event here: no PMU, or a VM without a virtual one)";
  } else if (error_number == ENOSYS) {
    reason += " (the kernel or a seccomp profile blocks the system call)";
  }
  return reason;
}

// A counter's value scaled up for the time it was not scheduled on the PMU (multiplexing); nullopt when
// it never ran.
std::optional<uint64_t> read_scaled(int fd) {
  uint64_t values[3] = {0, 0, 0};  // value, time enabled, time running
  if (read(fd, values, sizeof(values)) != static_cast<ssize_t>(sizeof(values))) return std::nullopt;
  if (values[2] == 0) return values[1] == 0 ? std::optional<uint64_t>(0) : std::nullopt;
  if (values[2] >= values[1]) return values[0];
  return static_cast<uint64_t>(std::llround(static_cast<double>(values[0]) * values[1] / values[2]));
}

}  // namespace

std::optional<double> CounterValues::ipc() const {
  if (!instructions || !cycles || *cycles == 0) return std::nullopt;
  return static_cast<double>(*instructions) / static_cast<double>(*cycles);
}

PerfCounters PerfCounters::open_for_process() { return open_for_process_with(kHardwareEvents); }

PerfCounters PerfCounters::open_for_process_with(const std::array<PerfEventSpec, 3>& events) {
  PerfCounters counters;
  for (pid_t tid : process_thread_ids()) {
    int leader = -1;
    for (int counter = 0; counter < kCounterCount; ++counter) {
      // A counter that failed for an earlier thread is left out for every thread: a sum over some threads
      // only would be wrong, not missing.
      if (!counters.reason_.empty() && counters.fds_[counter].empty()) continue;
      const int fd = open_event(events[counter], tid, leader);
      if (fd >= 0) {
        counters.fds_[counter].push_back(fd);
        if (leader == -1) leader = fd;
        continue;
      }
      if (errno == ESRCH) break;  // the thread exited since the listing: nothing of it to count
      const std::string reason = open_failure(events[counter].name, errno);
      counters.reason_ += counters.reason_.empty() ? reason : "; " + reason;
      for (int fd_open : counters.fds_[counter]) close(fd_open);
      counters.fds_[counter].clear();
      if (counter == kCycles) break;  // no leader: the thread's other counters cannot join a group
    }
  }
  // A leader (cycles) that failed on a later thread after succeeding on earlier ones leaves groups
  // without members; the reason says so, and the counters still open stay correct sums.
  return counters;
}

PerfCounters::PerfCounters(PerfCounters&& other) noexcept { *this = std::move(other); }

PerfCounters& PerfCounters::operator=(PerfCounters&& other) noexcept {
  if (this != &other) {
    close_all();
    for (int counter = 0; counter < kCounterCount; ++counter) fds_[counter] = std::exchange(other.fds_[counter], {});
    reason_ = std::move(other.reason_);
  }
  return *this;
}

PerfCounters::~PerfCounters() { close_all(); }

void PerfCounters::close_all() {
  for (auto& fds : fds_) {
    for (int fd : fds) close(fd);
    fds.clear();
  }
}

bool PerfCounters::available() const {
  for (const auto& fds : fds_) {
    if (!fds.empty()) return true;
  }
  return false;
}

// A counter's total over its descriptors, or nullopt when one cannot be read.
std::optional<uint64_t> PerfCounters::total(int counter) const {
  if (fds_[counter].empty()) return std::nullopt;
  uint64_t sum = 0;
  for (int fd : fds_[counter]) {
    const auto value = read_scaled(fd);
    if (!value) return std::nullopt;
    sum += *value;
  }
  return sum;
}

void PerfCounters::start() {
  // An interval is the difference of two reads, not a reset: PERF_EVENT_IOC_RESET does not clear what
  // exited inherited threads have already folded into their parent event, and a thread that ends just
  // before a reset folds its counts in after it.
  for (int counter = 0; counter < kCounterCount; ++counter) baseline_[counter] = total(counter);
  for (const auto& fds : fds_) {
    for (int fd : fds) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  }
}

CounterValues PerfCounters::stop() {
  for (const auto& fds : fds_) {
    for (int fd : fds) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  }
  std::optional<uint64_t> deltas[kCounterCount];
  for (int counter = 0; counter < kCounterCount; ++counter) {
    const std::optional<uint64_t> now = total(counter);
    if (now && baseline_[counter]) deltas[counter] = *now - std::min(*now, *baseline_[counter]);
  }
  return CounterValues{deltas[kInstructions], deltas[kCycles], deltas[kLlcMisses]};
}

}  // namespace infertune
