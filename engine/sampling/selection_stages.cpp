#include "engine/sampling/selection_stages.h"

#include <fmt/format.h>

namespace infertune {

int32_t GreedyStage::select(Candidates& candidates) const {
  if (!candidates.has_possible()) return kNoToken;
  const std::span<const Candidate> items = candidates.items();
  if (candidates.sorted()) return items.front().id;
  const Candidate* best = &items.front();
  for (const Candidate& c : items) {
    if (ranks_before(c, *best)) best = &c;
  }
  return best->id;
}

int32_t DistStage::select(Candidates& candidates) {
  if (!candidates.has_possible()) return kNoToken;
  candidates.softmax();
  const std::span<const Candidate> items = candidates.items();
  double total = 0.0;
  for (const Candidate& c : items) total += c.p;
  // Scaling the draw by the actual total (not 1) means rounding in the probabilities can never leave
  // the draw past the end of the list.
  const double target = rng_.uniform() * total;
  double cumulative = 0.0;
  int32_t last_possible = kNoToken;
  for (const Candidate& c : items) {
    if (c.p <= 0.0f) continue;
    cumulative += c.p;
    last_possible = c.id;
    if (target < cumulative) return c.id;
  }
  return last_possible;
}

std::string DistStage::describe() const { return fmt::format("dist(seed {})", rng_.seed()); }

}  // namespace infertune
