#include "engine/context/step_fault_injection.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace infertune {
namespace {

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double read_fraction_once() {
  const char* text = std::getenv(kStepSlowdownVariable);
  if (text == nullptr || *text == '\0') return 0;
  double fraction = 0;
  if (!parse_step_slowdown(text, fraction)) {
    fmt::print(stderr, "infertune: warning: {}='{}' is not a fraction in 0..10; ignored\n", kStepSlowdownVariable,
               text);
    return 0;
  }
  return fraction;
}

}  // namespace

bool parse_step_slowdown(const char* text, double& fraction) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(value) || value < 0 || value > 10) return false;
  fraction = value;
  return true;
}

double step_slowdown_fraction() {
  static const double fraction = read_fraction_once();
  return fraction;
}

StepSlowdownScope::StepSlowdownScope() : fraction_(step_slowdown_fraction()) {
  if (fraction_ > 0) started_ns_ = now_ns();
}

StepSlowdownScope::~StepSlowdownScope() {
  if (fraction_ <= 0) return;
  const long long now = now_ns();
  const long long until = now + static_cast<long long>(std::llround(static_cast<double>(now - started_ns_) * fraction_));
  while (now_ns() < until) {
  }
}

}  // namespace infertune
