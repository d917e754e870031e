#pragma once
// Runs measurement work on one thread per listed CPU, each pinned to its CPU, all repetitions in lockstep:
// every thread starts a repetition together and the repetition lasts until the slowest one finishes,
// which is what "all cores" throughput means.
#include <functional>
#include <vector>

#include "kernels/result.h"

namespace infertune {

// Thread t (0 <= t < cpus.size()) runs on cpus[t]. Pinning is best effort: a CPU the process may not use
// leaves its thread unpinned rather than failing the measurement.
class PinnedThreads {
 public:
  explicit PinnedThreads(std::vector<int> cpus) : cpus_(std::move(cpus)) {}

  unsigned size() const { return static_cast<unsigned>(cpus_.size()); }

  // Runs setup(t) once on every thread (e.g. first touch of that thread's memory), then `repetitions`
  // times work(t, rep); returns the wall seconds of each repetition. Errors when a thread cannot start.
  // setup and work must not throw.
  Result<std::vector<double>> run(const std::function<void(unsigned thread)>& setup,
                                  const std::function<void(unsigned thread, unsigned rep)>& work,
                                  unsigned repetitions) const;

 private:
  std::vector<int> cpus_;
};

}  // namespace infertune
