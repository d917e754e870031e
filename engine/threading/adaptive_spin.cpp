#include "engine/threading/adaptive_spin.h"

#include <algorithm>

namespace infertune {

std::chrono::nanoseconds adaptive_spin_budget(const SpinPolicy& policy, std::chrono::nanoseconds typical_wait) {
  if (policy.spins_forever()) return std::chrono::nanoseconds::max();
  return std::min(policy.budget(), std::max(kMinSpin, kSpinOverTypical * typical_wait));
}

std::chrono::nanoseconds next_typical_wait(std::chrono::nanoseconds typical_wait, std::chrono::nanoseconds waited) {
  return typical_wait + (waited - typical_wait) / 8;
}

}  // namespace infertune
