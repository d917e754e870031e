#include "sweeps/recommend/noise_margin.h"

#include <fmt/format.h>

#include <cmath>

namespace infertune {
namespace {

std::optional<double> relative_percent(const Estimate& e) {
  if (!e.ci95_half_width || e.value == 0) return std::nullopt;
  return *e.ci95_half_width / std::abs(e.value) * 100.0;
}

}  // namespace

Margin compute_margin(const Estimate& winner, const Estimate& runner_up, bool higher_is_better) {
  Margin m;
  const double better = higher_is_better ? winner.value : runner_up.value;
  const double worse = higher_is_better ? runner_up.value : winner.value;
  m.percent = worse != 0 ? (better / worse - 1.0) * 100.0 : 0.0;
  m.winner_ci_percent = relative_percent(winner);
  m.runner_up_ci_percent = relative_percent(runner_up);
  if (winner.ci95_half_width && runner_up.ci95_half_width) {
    const double gap = std::abs(winner.value - runner_up.value);
    m.within_noise = gap <= *winner.ci95_half_width + *runner_up.ci95_half_width;
  }
  return m;
}

std::string Margin::text() const {
  const std::string margin = fmt::format("margin {:.1f}%", percent);
  if (!within_noise) return margin + " (noise unknown: a score was measured once)";
  if (!*within_noise) return margin + " (outside noise)";
  return fmt::format("{} (within noise: ±{:.1f}% / ±{:.1f}%)", margin, winner_ci_percent.value_or(0),
                     runner_up_ci_percent.value_or(0));
}

}  // namespace infertune
