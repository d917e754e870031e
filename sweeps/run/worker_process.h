#pragma once
// A child process the sweep runner talks to through pipes: started with fork + exec in a process group of its
// own (a terminal's Ctrl-C reaches only the runner, and a kill reaches everything the worker started), under an
// optional address-space limit (RLIMIT_AS). The runner writes its stdin, reads its stdout line by line with a
// deadline, and keeps the last lines of its stderr for the failure reason. Every descriptor the runner holds is
// close-on-exec, and SIGPIPE is ignored in the runner, so a dead worker is an error value, never a signal.
//
// The object owns the process: destroying it before finish() kills the group and reaps it, so no worker
// outlives the runner's handle on it.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"
#include "sweeps/run/worker_exit.h"

namespace infertune {

struct WorkerCommand {
  std::string executable;                      // a path (not searched in PATH)
  std::vector<std::string> arguments;          // argv[1...]
  std::vector<std::string> extra_environment;  // NAME=VALUE entries added to (or replacing in) the runner's
  std::optional<uint64_t> memory_limit_bytes;  // RLIMIT_AS of the child
};

class WorkerProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Errors when the process cannot be created or the executable cannot be run (naming it and why).
  static Result<WorkerProcess> start(const WorkerCommand& command);

  WorkerProcess(WorkerProcess&& other) noexcept;
  WorkerProcess& operator=(WorkerProcess&&) = delete;
  WorkerProcess(const WorkerProcess&) = delete;
  ~WorkerProcess();

  pid_t pid() const { return pid_; }

  // Writes all of `bytes` to the child's stdin; an error when it has closed it (exited) or has not taken it all
  // by the deadline.
  Status write_input(std::string_view bytes, Clock::time_point deadline);
  // The child reads end of file on stdin: the runner is stopping.
  void close_input();

  enum class LineState { line, deadline, closed, too_long };
  struct Line {
    LineState state = LineState::closed;
    std::string text;  // without the newline
  };
  // The next line of stdout, collecting stderr meanwhile; `closed` at end of file (a partial last line is
  // dropped), `too_long` past max_line_bytes (the output is not a protocol the runner can follow).
  Line next_line(Clock::time_point deadline);

  // SIGKILL to the child's whole process group (remembered in the WorkerExit). A no-op once reaped.
  void kill_group();
  // Waits up to `grace` for the child to exit by itself, kills the group if it has not, reaps it and reads
  // what is left of its stderr. Calling it again returns the same result.
  WorkerExit finish(std::chrono::milliseconds grace);

  // The last lines of stderr (at most kStderrLines, each cut at kStderrLineBytes).
  std::vector<std::string> stderr_tail() const { return {stderr_lines_.begin(), stderr_lines_.end()}; }

  static constexpr size_t kStderrLines = 20;
  static constexpr size_t kStderrLineBytes = 400;
  static constexpr size_t kMaxLineBytes = size_t(256) << 20;

 private:
  WorkerProcess() = default;
  // Reads what the pipes hold, waiting at most `timeout_ms` (-1: until something happens).
  void pump(int timeout_ms);
  void read_stdout();
  void read_stderr();
  void add_stderr_line(std::string line);
  bool try_reap(bool block);
  void close_fds();

  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  std::string stdout_buffer_;
  size_t stdout_scanned_ = 0;  // bytes of stdout_buffer_ known to hold no newline
  std::string stderr_partial_;
  std::deque<std::string> stderr_lines_;
  bool reaped_ = false;
  bool killed_by_us_ = false;
  WorkerExit exit_;
};

}  // namespace infertune
