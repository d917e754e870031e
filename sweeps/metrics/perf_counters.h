#pragma once
// Hardware counters of the whole process (every thread, those that exist at open time and those started
// later) via perf_event_open: retired instructions, core cycles, last-level-cache misses.
//
// The kernel counts one task per event; `inherit` adds children created after the event is opened, but
// not threads that already exist. So open_for_process() opens one event group {cycles, instructions,
// LLC misses} per thread listed in /proc/self/task, each with inherit = 1, and sums them at stop: a thread
// started later is a clone of some listed thread and is counted by inherit. (The group keeps the three
// counters scheduled together, so their ratio, IPC, is of the same instructions; each is read on its own
// because the kernel refuses PERF_FORMAT_GROUP reads of inherited events, and scaled by time enabled /
// running where the PMU multiplexes.) User-space only (exclude_kernel), which perf_event_paranoid 2 allows.
//
// Where the kernel does not allow it (perf_event_paranoid > 2 without CAP_PERFMON, a container's seccomp
// profile, a VM without a virtual PMU, a counter the CPU lacks) the values are nullopt and
// unavailable_reason() says why. Nothing here is ever an error that stops a trial.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infertune {

struct CounterValues {
  std::optional<uint64_t> instructions;
  std::optional<uint64_t> cycles;
  std::optional<uint64_t> llc_misses;

  // instructions / cycles when both are known and cycles > 0.
  std::optional<double> ipc() const;
};

// One perf event: perf_event_attr's type and config.
struct PerfEventSpec {
  const char* name;
  uint32_t type;
  uint64_t config;
};

class PerfCounters {
 public:
  static PerfCounters open_for_process();
  // The same with other events in the cycles, instructions and LLC-miss slots. Tests put the software task
  // clock (which needs no PMU) there to check the per-thread and inherit logic on hosts without counters.
  static PerfCounters open_for_process_with(const std::array<PerfEventSpec, 3>& cycles_instructions_llc);

  PerfCounters() = default;
  PerfCounters(PerfCounters&& other) noexcept;
  PerfCounters& operator=(PerfCounters&& other) noexcept;
  PerfCounters(const PerfCounters&) = delete;
  PerfCounters& operator=(const PerfCounters&) = delete;
  ~PerfCounters();

  // Enable every counter / disable them and return the counts since start(). Without counters
  // start() does nothing and stop() returns all nullopt.
  void start();
  CounterValues stop();

  // True when at least one counter could be opened.
  bool available() const;
  // Why a counter is missing ("" when all three are counted), e.g. "perf_event_open(cycles): Permission
  // denied (kernel.perf_event_paranoid = 3)".
  const std::string& unavailable_reason() const { return reason_; }

 private:
  enum Counter { kCycles, kInstructions, kLlcMisses, kCounterCount };
  // fds_[counter] holds one descriptor per thread; an empty list: the counter could not be opened.
  std::vector<int> fds_[kCounterCount];
  std::optional<uint64_t> baseline_[kCounterCount];  // totals when the interval started
  std::optional<uint64_t> total(int counter) const;
  std::string reason_;

  void close_all();
};

}  // namespace infertune
