#include "sweeps/run/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

extern char** environ;

namespace infertune {

namespace {

// Writing to a pipe whose reader died must be an EPIPE error here, not a signal that ends the runner.
void ignore_sigpipe_once() {
  static std::once_flag once;
  std::call_once(once, [] { std::signal(SIGPIPE, SIG_IGN); });
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// A pipe whose ends are close-on-exec and numbered >= 3, so that the child's dup2 onto 0, 1 and 2 can never
// overwrite one of them (possible when the runner itself started with a standard descriptor closed).
Status make_pipe(std::array<int, 2>& fds) {
  if (pipe2(fds.data(), O_CLOEXEC) != 0) return fail("cannot create a pipe: {}", std::strerror(errno));
  for (int& fd : fds) {
    if (fd >= 3) continue;
    const int raised = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    fd = raised;
    if (fd < 0) return fail("cannot move a pipe descriptor: {}", std::strerror(errno));
  }
  return Status::success();
}

std::string variable_name(std::string_view entry) { return std::string(entry.substr(0, entry.find('='))); }

// The runner's environment with the command's entries added, a same-named variable replaced.
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> names;
  for (const auto& e : extra) names.push_back(variable_name(e));
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    if (std::ranges::find(names, variable_name(*e)) == names.end()) env.emplace_back(*e);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (auto& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

void place_fd(int fd, int target) {
  if (fd == target) {
    fcntl(fd, F_SETFD, 0);  // dup2 onto itself would leave close-on-exec set
  } else {
    dup2(fd, target);
  }
}

// In the child between fork and exec: only async-signal-safe calls (the runner may have other threads).
[[noreturn]] void exec_child(const char* path, char* const* argv, char* const* envp, int in, int out, int err,
                             int report_fd, const std::optional<uint64_t>& memory_limit, pid_t parent) {
  setpgid(0, 0);
  // A runner killed with SIGKILL takes its worker with it (the worker is in its own process group, so
  // nothing else would reach it); the check closes the race with a parent that died before the prctl.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  if (memory_limit) {
    const rlimit limit{static_cast<rlim_t>(*memory_limit), static_cast<rlim_t>(*memory_limit)};
    if (setrlimit(RLIMIT_AS, &limit) != 0) {
      const int e = errno;
      (void)!write(report_fd, &e, sizeof e);
      _exit(127);
    }
  }
  // Ignored signals stay ignored across exec; the worker gets default dispositions and no blocked signals.
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  for (int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD}) sigaction(sig, &defaults, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  place_fd(in, 0);
  place_fd(out, 1);
  place_fd(err, 2);
  // Any descriptor the runner opened without O_CLOEXEC (a database, a log) stays out of the worker.
  close_range(3, ~0u, CLOSE_RANGE_CLOEXEC);
  execve(path, argv, envp);
  const int e = errno;
  (void)!write(report_fd, &e, sizeof e);
  _exit(127);
}

// What the child wrote to the report pipe before exec: nothing when exec succeeded.
std::optional<int> exec_error(int report_fd) {
  int e = 0;
  ssize_t n;
  do {
    n = read(report_fd, &e, sizeof e);
  } while (n < 0 && errno == EINTR);
  if (n == sizeof e) return e;
  return std::nullopt;
}

int ms_until(WorkerProcess::Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - WorkerProcess::Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 60'000));
}

}  // namespace

Result<WorkerProcess> WorkerProcess::start(const WorkerCommand& command) {
  ignore_sigpipe_once();
  std::vector<std::string> args{command.executable};
  args.insert(args.end(), command.arguments.begin(), command.arguments.end());
  std::vector<std::string> env = child_environment(command.extra_environment);
  std::vector<char*> argv = pointers_to(args);
  std::vector<char*> envp = pointers_to(env);

  std::array<int, 2> in{-1, -1}, out{-1, -1}, err{-1, -1}, report{-1, -1};
  auto close_all = [&] {
    for (auto* p : {&in, &out, &err, &report}) {
      close_fd((*p)[0]);
      close_fd((*p)[1]);
    }
  };
  for (auto* p : {&in, &out, &err, &report}) {
    if (Status s = make_pipe(*p); !s) {
      close_all();
      return s.error();
    }
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int e = errno;
    close_all();
    return fail("cannot start a worker ({}): fork: {}", command.executable, std::strerror(e));
  }
  if (pid == 0) {
    exec_child(command.executable.c_str(), argv.data(), envp.data(), in[0], out[1], err[1], report[1],
               command.memory_limit_bytes, parent);
  }
  setpgid(pid, pid);  // also here, so the group exists before the first kill_group whoever runs first
  close_fd(in[0]);
  close_fd(out[1]);
  close_fd(err[1]);
  close_fd(report[1]);
  const std::optional<int> failed = exec_error(report[0]);
  close_fd(report[0]);

  WorkerProcess p;
  p.pid_ = pid;
  p.stdin_fd_ = in[1];
  p.stdout_fd_ = out[0];
  p.stderr_fd_ = err[0];
  if (failed) {
    p.finish(std::chrono::milliseconds(1000));
    return fail("cannot run the worker '{}': {}", command.executable, std::strerror(*failed));
  }
  for (int fd : {p.stdin_fd_, p.stdout_fd_, p.stderr_fd_}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return p;
}

WorkerProcess::WorkerProcess(WorkerProcess&& o) noexcept
    : pid_(o.pid_),
      stdin_fd_(o.stdin_fd_),
      stdout_fd_(o.stdout_fd_),
      stderr_fd_(o.stderr_fd_),
      stdout_buffer_(std::move(o.stdout_buffer_)),
      stdout_scanned_(o.stdout_scanned_),
      stderr_partial_(std::move(o.stderr_partial_)),
      stderr_lines_(std::move(o.stderr_lines_)),
      reaped_(o.reaped_),
      killed_by_us_(o.killed_by_us_),
      exit_(o.exit_) {
  o.pid_ = -1;
  o.stdin_fd_ = o.stdout_fd_ = o.stderr_fd_ = -1;
  o.reaped_ = true;
}

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0 && !reaped_) {
    kill_group();
    try_reap(/*block=*/true);
  }
  close_fds();
}

Status WorkerProcess::write_input(std::string_view bytes, Clock::time_point deadline) {
  while (!bytes.empty()) {
    if (stdin_fd_ < 0) return fail("the worker's input is closed");
    const ssize_t n = write(stdin_fd_, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      return fail("cannot write to the worker: {}", std::strerror(errno));
    }
    // The pipe is full: wait for the worker to read, draining its output meanwhile (a worker blocked on a
    // full stderr pipe would otherwise never read its input).
    if (Clock::now() >= deadline) return fail("the worker did not read its input in time");
    std::array<pollfd, 3> fds{pollfd{stdin_fd_, POLLOUT, 0}, pollfd{stdout_fd_, POLLIN, 0},
                              pollfd{stderr_fd_, POLLIN, 0}};
    if (poll(fds.data(), fds.size(), std::min(100, ms_until(deadline))) <= 0) continue;
    if (stdout_fd_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) read_stdout();
    if (stderr_fd_ >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) read_stderr();
  }
  return Status::success();
}

void WorkerProcess::close_input() { close_fd(stdin_fd_); }

void WorkerProcess::read_stdout() {
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(stdout_fd_, buffer, sizeof buffer);
    if (n > 0) {
      stdout_buffer_.append(buffer, static_cast<size_t>(n));
      if (stdout_buffer_.size() > kMaxLineBytes) return;  // next_line reports it
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) close_fd(stdout_fd_);
    return;
  }
}

void WorkerProcess::add_stderr_line(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() > kStderrLineBytes) line = line.substr(0, kStderrLineBytes) + "...";
  stderr_lines_.push_back(std::move(line));
  if (stderr_lines_.size() > kStderrLines) stderr_lines_.pop_front();
}

void WorkerProcess::read_stderr() {
  char buffer[16384];
  for (;;) {
    const ssize_t n = read(stderr_fd_, buffer, sizeof buffer);
    if (n > 0) {
      stderr_partial_.append(buffer, static_cast<size_t>(n));
      for (size_t nl; (nl = stderr_partial_.find('\n')) != std::string::npos;) {
        add_stderr_line(stderr_partial_.substr(0, nl));
        stderr_partial_.erase(0, nl + 1);
      }
      // A flood without newlines is kept as cut lines, never as an unbounded buffer.
      if (stderr_partial_.size() > 16 * kStderrLineBytes) {
        add_stderr_line(std::move(stderr_partial_));
        stderr_partial_.clear();
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) close_fd(stderr_fd_);
    return;
  }
}

void WorkerProcess::pump(int timeout_ms) {
  std::array<pollfd, 2> fds{};
  nfds_t n = 0;
  for (int fd : {stdout_fd_, stderr_fd_}) {
    if (fd >= 0) fds[n++] = pollfd{fd, POLLIN, 0};
  }
  const int ready = poll(n ? fds.data() : nullptr, n, timeout_ms);  // with no descriptor: a sleep
  if (ready <= 0) return;
  for (nfds_t i = 0; i < n; ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    if (fds[i].fd == stdout_fd_) {
      read_stdout();
    } else if (fds[i].fd == stderr_fd_) {
      read_stderr();
    }
  }
}

WorkerProcess::Line WorkerProcess::next_line(Clock::time_point deadline) {
  for (;;) {
    const size_t nl = stdout_buffer_.find('\n', stdout_scanned_);
    if (nl != std::string::npos) {
      Line line{LineState::line, stdout_buffer_.substr(0, nl)};
      stdout_buffer_.erase(0, nl + 1);
      stdout_scanned_ = 0;
      return line;
    }
    stdout_scanned_ = stdout_buffer_.size();
    if (stdout_buffer_.size() > kMaxLineBytes) return {LineState::too_long, {}};
    if (stdout_fd_ < 0) return {LineState::closed, {}};
    if (Clock::now() >= deadline) return {LineState::deadline, {}};
    pump(ms_until(deadline));
  }
}

void WorkerProcess::kill_group() {
  if (pid_ <= 0 || reaped_) return;  // after the reap the id may belong to someone else
  kill(-pid_, SIGKILL);
  killed_by_us_ = true;
}

bool WorkerProcess::try_reap(bool block) {
  if (reaped_) return true;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return false;
  reaped_ = true;
  exit_.killed_by_us = killed_by_us_;
  if (r == pid_ && WIFEXITED(status)) {
    exit_.exited = true;
    exit_.exit_code = WEXITSTATUS(status);
  } else if (r == pid_ && WIFSIGNALED(status)) {
    exit_.signaled = true;
    exit_.signal = WTERMSIG(status);
  }
  return true;
}

WorkerExit WorkerProcess::finish(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return exit_;
  const auto deadline = Clock::now() + grace;
  while (!try_reap(/*block=*/false)) {
    if (Clock::now() >= deadline) {
      kill_group();
      try_reap(/*block=*/true);
      break;
    }
    pump(std::min(20, ms_until(deadline)));
    stdout_buffer_.clear();  // no one reads lines any more; a chatty worker must not fill memory (or the pipe)
  }
  // Everything in the group is dead now, so the pipes reach end of file once drained.
  for (int i = 0; i < 100 && (stderr_fd_ >= 0 || stdout_fd_ >= 0); ++i) pump(10);
  if (!stderr_partial_.empty()) add_stderr_line(std::move(stderr_partial_));
  stderr_partial_.clear();
  close_fds();
  return exit_;
}

void WorkerProcess::close_fds() {
  close_fd(stdin_fd_);
  close_fd(stdout_fd_);
  close_fd(stderr_fd_);
}

}  // namespace infertune
