// The test hook the compare self-test uses to make a candidate slower (engine/context/step_fault_injection.h):
// what INFERTUNE_FAULT_SLOWDOWN accepts, and that a scope stretches its time by the fraction.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "engine/context/step_fault_injection.h"

namespace infertune {
namespace {

TEST(CompareFaultInjection, ParsesAFractionInRange) {
  double f = -1;
  EXPECT_TRUE(parse_step_slowdown("0.2", f));
  EXPECT_DOUBLE_EQ(f, 0.2);
  EXPECT_TRUE(parse_step_slowdown("0", f));
  EXPECT_DOUBLE_EQ(f, 0);
  EXPECT_TRUE(parse_step_slowdown("10", f));
  for (const char* bad : {"", "abc", "0.2x", "-0.1", "11", "nan", "inf"}) EXPECT_FALSE(parse_step_slowdown(bad, f)) << bad;
  EXPECT_FALSE(parse_step_slowdown(nullptr, f));
}

// The test binary runs without the variable: the scope costs nothing and adds nothing.
TEST(CompareFaultInjection, UnsetMeansNoDelay) {
  if (std::getenv(kStepSlowdownVariable) != nullptr) GTEST_SKIP() << kStepSlowdownVariable << " is set in the environment";
  EXPECT_DOUBLE_EQ(step_slowdown_fraction(), 0);
  const auto start = std::chrono::steady_clock::now();
  { const StepSlowdownScope scope; }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
}

}  // namespace
}  // namespace infertune
