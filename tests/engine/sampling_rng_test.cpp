// SamplingRng: its stream is std::mt19937_64's, whose values the C++ standard fixes, converted to [0, 1)
// by our own arithmetic; and resolve_seed's handling of llama.cpp's "random" seed.
#include "engine/sampling/sampling_rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "engine/sampling/sampling_params.h"

namespace infertune {
namespace {

TEST(SamplingRng, MatchesTheStandardsMt19937_64Value) {
  // [rand.predef]: the 10000th invocation of a default-constructed mt19937_64 (seed 5489) produces
  // 9981545732273789042. Our uniform() must be exactly that value's top 53 bits times 2^-53.
  SamplingRng rng(5489u);
  for (int i = 1; i < 10000; ++i) (void)rng.uniform();
  const uint64_t expected_bits = 9981545732273789042ull >> 11;
  EXPECT_EQ(rng.uniform(), std::ldexp(static_cast<double>(expected_bits), -53));
}

TEST(SamplingRng, UniformIsInUnitIntervalWithRightMoments) {
  SamplingRng rng(123);
  const int n = 200000;
  double sum = 0.0;
  double sum_sq = 0.0;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum_sq += u * u;
  }
  // Mean 1/2 and variance 1/12; the standard error of the mean is about 0.00065.
  EXPECT_NEAR(sum / n, 0.5, 0.004);
  EXPECT_NEAR(sum_sq / n - (sum / n) * (sum / n), 1.0 / 12.0, 0.002);
}

TEST(SamplingRng, RestartReplaysAndSeedsDiffer) {
  SamplingRng a(42);
  SamplingRng b(42);
  SamplingRng c(43);
  std::vector<double> first;
  int differing = 0;
  for (int i = 0; i < 100; ++i) {
    first.push_back(a.uniform());
    EXPECT_EQ(first.back(), b.uniform());
    differing += (first.back() != c.uniform());
  }
  EXPECT_EQ(differing, 100);
  a.restart();
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.uniform(), first[i]);
  EXPECT_EQ(a.seed(), 42u);
}

TEST(SamplingRng, ResolveSeedKeepsExplicitSeedsAndDrawsForRandom) {
  EXPECT_EQ(resolve_seed(0), 0u);
  EXPECT_EQ(resolve_seed(42), 42u);
  EXPECT_EQ(resolve_seed(0xFFFFFFFFFFFFFFFFull), 0xFFFFFFFFFFFFFFFFull);
  const uint64_t first = resolve_seed(kRandomSeed);
  const uint64_t second = resolve_seed(kRandomSeed);
  EXPECT_NE(first, kRandomSeed);
  EXPECT_NE(second, kRandomSeed);
  EXPECT_NE(first, second);  // two 64-bit draws collide with probability 2^-64
}

}  // namespace
}  // namespace infertune
