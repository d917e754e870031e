#pragma once
// The random stream behind `dist`, identical on every platform for a given seed: std::mt19937_64's output
// is fixed by the C++ standard, but std::uniform_real_distribution's is not, so the conversion of its
// bits to a double in [0, 1) is done here.
#include <cstdint>
#include <random>

namespace infertune {

class SamplingRng {
 public:
  explicit SamplingRng(uint64_t seed) : seed_(seed), engine_(seed) {}

  uint64_t seed() const { return seed_; }
  // The top 53 bits of one 64-bit output, scaled by 2^-53: every double k * 2^-53 (0 <= k < 2^53)
  // equally likely; never 1.0.
  double uniform();
  // Back to the start of the stream.
  void restart() { engine_.seed(seed_); }

 private:
  uint64_t seed_;
  std::mt19937_64 engine_;
};

// The seed to use for a requested one: kRandomSeed (llama.cpp's "random") becomes a fresh seed from
// std::random_device (falling back to the clock where that device is unavailable), and never kRandomSeed
// itself, so the seed shown to the user always reproduces the run. Any other value is returned as is.
uint64_t resolve_seed(uint64_t requested);

}  // namespace infertune
