#pragma once
// A test hook, not a feature: makes every decode step slower by a fixed fraction of its own measured time,
// so that `infertune compare` (and anyone checking a regression gate) can run a candidate that is exactly
// N% slower whatever the machine's speed:
//
//   INFERTUNE_FAULT_SLOWDOWN=0.20 infertune bench -m model.gguf     # every step takes 1.20x as long
//
// The value is a fraction in [0, 10]. The process reads it once, on the first step; unset, empty or 0
// costs one predictable branch per step. A value that is not a number in range is ignored with one warning
// on stderr. The delay is a busy-wait on the decoding thread (a sleep would be rounded up by the
// scheduler's granularity and would not be proportional for sub-millisecond steps).
namespace infertune {

inline constexpr const char* kStepSlowdownVariable = "INFERTUNE_FAULT_SLOWDOWN";

// The fraction from the environment (0 when unset or invalid), read once per process.
double step_slowdown_fraction();

// Parses the variable's text: a finite number in [0, 10]; false otherwise.
bool parse_step_slowdown(const char* text, double& fraction);

// Put at the top of a decode step: when the slowdown is set, its destructor busy-waits the fraction of the
// time that passed since its construction.
class StepSlowdownScope {
 public:
  StepSlowdownScope();
  ~StepSlowdownScope();
  StepSlowdownScope(const StepSlowdownScope&) = delete;
  StepSlowdownScope& operator=(const StepSlowdownScope&) = delete;

 private:
  double fraction_ = 0;
  long long started_ns_ = 0;
};

}  // namespace infertune
