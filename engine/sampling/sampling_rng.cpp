#include "engine/sampling/sampling_rng.h"

#include <chrono>
#include <exception>

#include "engine/sampling/sampling_params.h"

namespace infertune {

double SamplingRng::uniform() {
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
  return static_cast<double>(engine_() >> 11) * kTwoToMinus53;
}

namespace {

uint64_t entropy_seed() {
  try {
    std::random_device device;
    // random_device yields 32-bit values; two make a full 64-bit seed.
    return (static_cast<uint64_t>(device()) << 32) | device();
  } catch (const std::exception&) {
    // No entropy source (some sandboxes): the clock is unpredictable enough for "pick any seed".
    const auto ticks = std::chrono::high_resolution_clock::now().time_since_epoch().count();
    return static_cast<uint64_t>(ticks) * 0x9E3779B97F4A7C15ull;
  }
}

}  // namespace

uint64_t resolve_seed(uint64_t requested) {
  if (requested != kRandomSeed) return requested;
  uint64_t seed = entropy_seed();
  while (seed == kRandomSeed) seed = entropy_seed();
  return seed;
}

}  // namespace infertune
