#pragma once
// The user's thread and CPU placement settings, with llama.cpp's flag names, meanings and defaults:
//   -t/--threads N        threads for generation (one token per step); <= 0: the number of physical cores
//                         among the CPUs the placement allows
//   -tb/--threads-batch N threads for prompt / batch evaluation; <= 0: same as -t
//   -C/--cpu-mask M       restrict to these CPUs: hex mask (0xF0) or range list (0-3,8); empty: no mask
//   --cpu-strict 0|1      1: pin each thread to one CPU of its set; 0: let threads float within it
//   --numa MODE           distribute (spread threads evenly over the NUMA nodes), isolate (only the node the
//                         process started on), numactl (only the CPUs the process was started with, e.g.
//                         by numactl or taskset); absent: no NUMA policy
//   --prio 0..3           normal, medium, high, realtime
//   --poll 0..100         how long a waiting thread spins before it sleeps: 0 sleeps at once, 100 never sleeps
#include <string>
#include <string_view>

#include "kernels/result.h"

namespace infertune {

enum class NumaMode { none, distribute, isolate, numactl };

enum class ThreadPriority { normal = 0, medium = 1, high = 2, realtime = 3 };

inline constexpr int kAutoThreads = -1;  // llama.cpp's "pick for me"
inline constexpr int kDefaultPoll = 50;  // llama.cpp's default polling level
inline constexpr int kMaxThreads = 1024;

struct PlacementOptions {
  int threads = kAutoThreads;
  int threads_batch = kAutoThreads;
  std::string cpu_mask;  // -C text; parsed by plan_placement (engine/threading/placement.h)
  bool cpu_strict = false;
  NumaMode numa = NumaMode::none;
  int priority = 0;  // ThreadPriority as its number, so the flag's range check can name the bad value
  int poll = kDefaultPoll;
};

// "distribute" | "isolate" | "numactl" (and "none", the absent flag); the error names --numa.
Result<NumaMode> parse_numa_mode(std::string_view text);
const char* numa_mode_name(NumaMode mode);
const char* priority_name(ThreadPriority priority);

// Range checks that need no topology: -t / -tb at most kMaxThreads, --prio 0..3, --poll 0..100, and the
// syntax of -C. Errors name the flag.
Status validate(const PlacementOptions& options);

}  // namespace infertune
