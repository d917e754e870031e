#include "engine/threading/placement_options.h"

#include "engine/threading/cpu_set.h"

namespace infertune {

Result<NumaMode> parse_numa_mode(std::string_view text) {
  if (text == "distribute") return NumaMode::distribute;
  if (text == "isolate") return NumaMode::isolate;
  if (text == "numactl") return NumaMode::numactl;
  if (text == "none") return NumaMode::none;
  return fail("--numa: unknown mode '{}' (expected distribute, isolate or numactl)", text);
}

const char* numa_mode_name(NumaMode mode) {
  switch (mode) {
    case NumaMode::distribute:
      return "distribute";
    case NumaMode::isolate:
      return "isolate";
    case NumaMode::numactl:
      return "numactl";
    case NumaMode::none:
      break;
  }
  return "none";
}

const char* priority_name(ThreadPriority priority) {
  switch (priority) {
    case ThreadPriority::medium:
      return "medium";
    case ThreadPriority::high:
      return "high";
    case ThreadPriority::realtime:
      return "realtime";
    case ThreadPriority::normal:
      break;
  }
  return "normal";
}

Status validate(const PlacementOptions& options) {
  if (options.threads > kMaxThreads)
    return fail("-t/--threads must be at most {}, got {}", kMaxThreads, options.threads);
  if (options.threads_batch > kMaxThreads) {
    return fail("-tb/--threads-batch must be at most {}, got {}", kMaxThreads, options.threads_batch);
  }
  if (options.priority < 0 || options.priority > 3) {
    return fail("--prio must be 0 (normal), 1 (medium), 2 (high) or 3 (realtime), got {}", options.priority);
  }
  if (options.poll < 0 || options.poll > 100) return fail("--poll must be in 0..100, got {}", options.poll);
  if (!options.cpu_mask.empty()) {
    if (auto mask = parse_cpu_mask(options.cpu_mask); !mask) return mask.error();
  }
  return {};
}

}  // namespace infertune
