#pragma once
// --prio for the calling thread (on Linux the nice value and the scheduling policy are per thread):
//   normal   leaves the thread as it is (never lowers it)
//   medium   nice -5
//   high     nice -10
//   realtime SCHED_FIFO at priority 90 (clamped to the system's range), else nice -20
// (llama.cpp's process nice values for the same levels; it also uses SCHED_FIFO for medium and high, which
// starves the rest of the machine when threads spin, so we keep those on the normal scheduler.)
// Raising priority needs CAP_SYS_NICE or an rlimit; when refused the thread keeps running as it was and
// the returned warning says so.
#include <optional>
#include <string>

#include "engine/threading/placement_options.h"

namespace infertune {

// Returns a warning when the priority could not be applied, nothing when it was.
std::optional<std::string> apply_thread_priority(ThreadPriority priority);

}  // namespace infertune
