#include "engine/sampling/stage_format.h"

#include <fmt/format.h>

#include <cmath>

namespace infertune {

std::string format_param(float value) {
  const double scaled = static_cast<double>(value) * 100.0;
  if (std::isfinite(scaled) && std::fabs(scaled - std::round(scaled)) < 1e-4) return fmt::format("{:.2f}", value);
  return fmt::format("{}", value);
}

}  // namespace infertune
