#pragma once
// The process's resident set size from /proc/self/status (or another process's, /proc/PID/status): VmHWM (the peak
// since start or since the last reset) and VmRSS (now). A trial resets the peak before it starts so that its peak is
// its own, not the model load's or an earlier trial's.
#include <sys/types.h>

#include <cstdint>
#include <optional>

#include "kernels/result.h"

namespace infertune {

// Writes "5" to /proc/self/clear_refs, which sets VmHWM back to the current RSS (Linux >= 4.0). An error
// (naming the file and errno) where the kernel or a sandbox does not permit it; the peak then keeps
// counting from process start.
Status reset_peak_rss();

// nullopt where /proc/self/status is unreadable or lacks the field (not Linux, a restricted sandbox).
std::optional<int64_t> peak_rss_bytes();
std::optional<int64_t> current_rss_bytes();
// Another running process's peak (its /proc/PID/status VmHWM): a server the sweep started, for example.
std::optional<int64_t> peak_rss_bytes_of(pid_t pid);

}  // namespace infertune
