#include "engine/threading/thread_priority.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace infertune {
namespace {

constexpr int kRealtimePriority = 90;

// setpriority(PRIO_PROCESS, tid) changes one thread on Linux.
bool set_thread_nice(int nice_value) {
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  return setpriority(PRIO_PROCESS, tid, nice_value) == 0;
}

bool set_fifo() {
  sched_param param{};
  param.sched_priority =
      std::clamp(kRealtimePriority, sched_get_priority_min(SCHED_FIFO), sched_get_priority_max(SCHED_FIFO));
  return pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
}

}  // namespace

std::optional<std::string> apply_thread_priority(ThreadPriority priority) {
  switch (priority) {
    case ThreadPriority::normal:
      return std::nullopt;
    case ThreadPriority::medium:
      if (set_thread_nice(-5)) return std::nullopt;
      break;
    case ThreadPriority::high:
      if (set_thread_nice(-10)) return std::nullopt;
      break;
    case ThreadPriority::realtime:
      if (set_fifo() || set_thread_nice(-20)) return std::nullopt;
      break;
  }
  return fmt::format("--prio {} ({}): not permitted here ({}); the thread keeps its priority",
                     static_cast<int>(priority), priority_name(priority), std::strerror(errno));
}

}  // namespace infertune
