#pragma once
// Runs one load level against a server: closed loop (N clients, each sending its next request when its reply
// ends) or open loop (requests arriving as a Poisson process at a set rate, whether or not earlier ones are
// done: what a service sees from many independent users). Warm-up requests go first, one at a time, and are
// not measured.
#include <cstdint>
#include <vector>

#include "bench/loadgen/load_options.h"
#include "bench/loadgen/prompt_source.h"
#include "bench/loadgen/stream_request.h"

namespace infertune {

struct LoadLevel {
  enum class Kind { closed, open } kind = Kind::closed;
  uint32_t concurrency = 1;  // closed
  double rate = 0;           // open: requests per second
  uint32_t index = 0;        // its place among the run's levels: each level draws prompts of its own
};

struct LevelRun {
  LoadLevel level;
  std::vector<RequestOutcome> outcomes{};  // the measured requests, in completion order
  double wall_s = 0;                       // from the first request sent to the last reply's end
};

LevelRun run_level(const LoadOptions& options, const LoadLevel& level, PromptSource& prompts);

// The levels the options ask for: every concurrency, then every rate.
std::vector<LoadLevel> load_levels(const LoadOptions& options);

}  // namespace infertune
