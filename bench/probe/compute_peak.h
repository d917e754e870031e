#pragma once
// Measured arithmetic peaks of the kernels the engine is built from: f32 FMA throughput (GFLOP/s) and the
// int8 dot product (GOP/s, a multiply and an add per u8 x s8 product), on one core and on one thread per
// physical core. Each is the best variant this CPU runs (compute_kernels.h).
#include <string>
#include <vector>

#include "bench/probe/rate.h"
#include "kernels/result.h"

namespace infertune {

struct ComputeFigures {
  std::string f32_isa;
  Rate f32_one_core;   // GFLOP/s
  Rate f32_all_cores;  // GFLOP/s
  std::string int8_isa;
  Rate int8_one_core;   // GOP/s
  Rate int8_all_cores;  // GOP/s
  bool operator==(const ComputeFigures&) const = default;
};

struct ComputePlan {
  double window_seconds = 0.02;  // the length of one repetition
  unsigned repetitions = 5;
};

// core_cpus: one OS CPU per physical core; the one-core figures use the first.
Result<ComputeFigures> measure_compute_peak(const std::vector<int>& core_cpus, const ComputePlan& plan);

}  // namespace infertune
