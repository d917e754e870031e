#include "sweeps/run/sweep_interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string_view>

namespace infertune {

namespace {

// What the handler touches: lock-free atomics and a pipe, the only things safe in signal context.
std::atomic<int> g_signal_count{0};
std::atomic<int> g_first_signal{0};
std::atomic<int> g_wake_fd{-1};
struct sigaction g_previous_int {
}, g_previous_term{};

void on_signal(int signal) {
  const int saved_errno = errno;
  int expected = 0;
  g_first_signal.compare_exchange_strong(expected, signal);
  g_signal_count.fetch_add(1);
  const int fd = g_wake_fd.load();
  if (fd >= 0) {
    const char byte = 1;
    [[maybe_unused]] ssize_t n = write(fd, &byte, 1);
  }
  errno = saved_errno;
}

// The parent pid in /proc/PID/stat: the field after the command name, which is in parentheses and may
// itself hold spaces and parentheses (hence the last ')').
std::optional<pid_t> parent_of(const std::filesystem::path& stat_file) {
  std::ifstream in(stat_file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 4 > text.size()) return std::nullopt;
  const size_t ppid_at = text.find(' ', close + 2);  // after ") S "
  if (ppid_at == std::string::npos) return std::nullopt;
  pid_t ppid = 0;
  auto [end, ec] = std::from_chars(text.data() + ppid_at + 1, text.data() + text.size(), ppid);
  if (ec != std::errc()) return std::nullopt;
  return ppid;
}

}  // namespace

int kill_child_processes() {
  const pid_t self = getpid();
  int children = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    pid_t pid = 0;
    auto [end, parse_ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (parse_ec != std::errc() || end != name.data() + name.size()) continue;
    if (parent_of(entry.path() / "stat") != self) continue;
    ++children;
    if (getpgid(pid) == pid) kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  return children;
}

Result<std::unique_ptr<InterruptWatch>> InterruptWatch::install(std::function<void(int count)> on_signal_callback) {
  std::unique_ptr<InterruptWatch> watch(new InterruptWatch());
  if (pipe2(watch->pipe_, O_CLOEXEC) != 0) return fail("cannot create the signal pipe: {}", std::strerror(errno));
  g_signal_count = 0;
  g_first_signal = 0;
  g_wake_fd = watch->pipe_[1];
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // blocking reads and waits of the runner go on; it polls the flags
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
  watch->watcher_ = std::thread([w = watch.get(), cb = std::move(on_signal_callback)] { w->watch(cb); });
  return watch;
}

void InterruptWatch::watch(std::function<void(int)> callback) {
  for (;;) {
    char byte = 0;
    const ssize_t n = read(pipe_[0], &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || byte == 0) return;  // the destructor's byte 0: stop watching
    const int count = g_signal_count.load();
    if (count >= 2) kill_child_processes();
    if (callback) callback(count);
  }
}

InterruptWatch::~InterruptWatch() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
  g_wake_fd = -1;
  const char stop = 0;
  [[maybe_unused]] ssize_t n = write(pipe_[1], &stop, 1);
  if (watcher_.joinable()) watcher_.join();
  close(pipe_[0]);
  close(pipe_[1]);
}

bool InterruptWatch::stop_requested() const { return g_signal_count.load() >= 1; }
bool InterruptWatch::abort_requested() const { return g_signal_count.load() >= 2; }

std::string InterruptWatch::signal_name() const {
  switch (g_first_signal.load()) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case 0:
      return "";
    default:
      return "a signal";
  }
}

}  // namespace infertune
