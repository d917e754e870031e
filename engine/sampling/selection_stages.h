#pragma once
// The last stage of a chain: picks one token from what the filters left. Both return kNoToken when no
// candidate is possible (an empty list, or every logit -inf / NaN) instead of inventing a token.
#include <cstdint>
#include <string>

#include "engine/sampling/candidates.h"
#include "engine/sampling/sampling_rng.h"

namespace infertune {

// llama.cpp's LLAMA_TOKEN_NULL.
inline constexpr int32_t kNoToken = -1;

// The highest logit; ties go to the lowest id.
class GreedyStage {
 public:
  int32_t select(Candidates& candidates) const;
  std::string describe() const { return "greedy"; }
};

// Draws from softmax(logits) with one uniform number per call, walking the candidates in their current
// order (deterministic: id order or ranks_before), so a seed reproduces the same tokens.
class DistStage {
 public:
  explicit DistStage(uint64_t seed) : rng_(seed) {}
  int32_t select(Candidates& candidates);
  void reset() { rng_.restart(); }
  std::string describe() const;

 private:
  SamplingRng rng_;
};

}  // namespace infertune
