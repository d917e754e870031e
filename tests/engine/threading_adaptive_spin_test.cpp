// The adaptive spin budget (engine/threading/adaptive_spin.h): kSpinOverTypical times the typical wait, within
// the --poll cap and never under kMinSpin; the typical wait follows the waits that ended while spinning.
#include "engine/threading/adaptive_spin.h"

#include <gtest/gtest.h>

namespace infertune {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

TEST(AdaptiveSpin, SpinsEightTypicalWaitsWithinThePollCap) {
  const SpinPolicy poll50(50);  // 1 ms cap
  EXPECT_EQ(adaptive_spin_budget(poll50, microseconds(3)), microseconds(24));
  EXPECT_EQ(adaptive_spin_budget(poll50, microseconds(5)), microseconds(40));
  EXPECT_EQ(adaptive_spin_budget(poll50, microseconds(100)), microseconds(800));
  EXPECT_EQ(adaptive_spin_budget(poll50, microseconds(400)), microseconds(1000));
  EXPECT_EQ(adaptive_spin_budget(SpinPolicy(1), microseconds(100)), microseconds(20));
}

TEST(AdaptiveSpin, NeverUnderItsFloorNorOverAZeroCap) {
  EXPECT_EQ(adaptive_spin_budget(SpinPolicy(50), nanoseconds(0)), kMinSpin);
  EXPECT_EQ(adaptive_spin_budget(SpinPolicy(50), nanoseconds(2000)), kMinSpin);
  EXPECT_EQ(adaptive_spin_budget(SpinPolicy(0), microseconds(100)), nanoseconds(0));
}

TEST(AdaptiveSpin, PollHundredIsNotCut) {
  EXPECT_EQ(adaptive_spin_budget(SpinPolicy(100), microseconds(1)), nanoseconds::max());
}

TEST(AdaptiveSpin, TypicalWaitMovesAnEighthTowardEachWait) {
  EXPECT_EQ(next_typical_wait(microseconds(8), microseconds(16)), microseconds(9));
  EXPECT_EQ(next_typical_wait(microseconds(16), microseconds(8)), microseconds(15));
  EXPECT_EQ(next_typical_wait(nanoseconds(800), nanoseconds(0)), nanoseconds(700));
}

TEST(AdaptiveSpin, TypicalWaitSettlesOnASteadyWait) {
  nanoseconds typical = kFirstTypicalWait;
  for (int i = 0; i < 200; ++i) typical = next_typical_wait(typical, microseconds(50));
  EXPECT_NEAR(static_cast<double>(typical.count()), 50'000.0, 50.0);
  for (int i = 0; i < 200; ++i) typical = next_typical_wait(typical, microseconds(1));
  EXPECT_NEAR(static_cast<double>(typical.count()), 1'000.0, 50.0);
}

}  // namespace
}  // namespace infertune
