#pragma once
// How a sweep worker process ended, and what that means for the trial it was running: the status the store
// records (failed, timeout, oom) and a reason a person can act on ("worker killed by signal 11
// (Segmentation fault); last stderr: ...", "timeout after 30 s", "out of memory (worker killed by SIGKILL)").
#include <string>
#include <string_view>
#include <vector>

#include "sweeps/store/store_records.h"

namespace infertune {

// The worker's own exit status after it reported a trial out of memory (its heap is then suspect).
inline constexpr int kWorkerOutOfMemoryExitCode = 86;

struct WorkerExit {
  bool exited = false;  // a normal exit with exit_code
  int exit_code = 0;
  bool signaled = false;  // killed by `signal`
  int signal = 0;
  bool killed_by_us = false;  // the runner sent the SIGKILL (timeout, stop, protocol error)

  // "exited with status 3", "killed by signal 11 (Segmentation fault)"
  std::string describe() const;
};

struct WorkerFailure {
  TrialStatus status = TrialStatus::failed;
  std::string reason;
};

// Why a worker ended without finishing its trial. `timeout_s` > 0: the runner killed it at the trial's
// deadline. OOM: killed by a SIGKILL the runner did not send (the kernel's OOM killer), the worker's own
// out-of-memory exit, or an abort whose stderr names std::bad_alloc. The last stderr lines end the reason.
WorkerFailure classify_worker_end(const WorkerExit& exit, double timeout_s,
                                  const std::vector<std::string>& stderr_tail);

// An error the engine returned for an allocation it could not make ("cannot allocate a KV cache ..."): the
// engine catches std::bad_alloc at its boundaries, so such an error is an out-of-memory, not a bug.
bool names_out_of_memory(std::string_view error_message);

// "; last stderr: line | line | ..." (at most the last `max_lines`), or "" when there was none.
std::string stderr_suffix(const std::vector<std::string>& stderr_tail, size_t max_lines = 20);

}  // namespace infertune
