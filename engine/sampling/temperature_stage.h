#pragma once
// Divides every logit by the temperature: above 1 flattens the distribution, below 1 sharpens it. A
// temperature <= 0 keeps only the best candidate (ties: the lowest id), as llama.cpp's temperature
// sampler does, so a chain that still ends in `dist` behaves as greedy.
#include <string>

#include "engine/sampling/candidates.h"

namespace infertune {

class TemperatureStage {
 public:
  explicit TemperatureStage(float temperature) : temperature_(temperature) {}
  void apply(Candidates& candidates) const;
  std::string describe() const;

 private:
  float temperature_;
};

}  // namespace infertune
