#include "engine/sampling/temperature_stage.h"

#include <fmt/format.h>

#include "engine/sampling/stage_format.h"

namespace infertune {

void TemperatureStage::apply(Candidates& candidates) const {
  if (candidates.empty()) return;
  if (temperature_ <= 0.0f) {
    candidates.keep_best(1);
    return;
  }
  if (temperature_ == 1.0f) return;
  for (Candidate& c : candidates.mutable_items()) c.logit /= temperature_;
}

std::string TemperatureStage::describe() const {
  if (temperature_ <= 0.0f) return fmt::format("temperature({}: argmax)", format_param(temperature_));
  return fmt::format("temperature({})", format_param(temperature_));
}

}  // namespace infertune
