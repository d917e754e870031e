#pragma once
// One sequence's sampler: an explicit list of stages over a Candidates array, then a selection stage.
// The default chain is llama.cpp's default order:
//   penalties -> top_k -> top_p -> min_p -> temperature -> dist       (temperature > 0)
//   penalties -> greedy                                                (temperature <= 0)
// (the truncation stages cannot change the argmax, so a greedy chain needs none of them).
//
//   SamplerChain chain(params);
//   for (...) { int32_t token = chain.sample(logits); chain.accept(token); }
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/sampling/candidates.h"
#include "engine/sampling/penalties_stage.h"
#include "engine/sampling/sampling_params.h"
#include "engine/sampling/selection_stages.h"
#include "engine/sampling/temperature_stage.h"
#include "engine/sampling/truncation_stages.h"
#include "kernels/result.h"

namespace infertune {

using FilterStage = std::variant<PenaltiesStage, TopKStage, TopPStage, MinPStage, TemperatureStage>;
using SelectionStage = std::variant<GreedyStage, DistStage>;

class SamplerChain {
 public:
  // The default chain above. `params` should pass validate() (create() and from_spec() check it); values
  // out of range give unspecified tokens but never undefined behaviour.
  explicit SamplerChain(const SamplingParams& params);

  // validate(params), then the default chain.
  static Result<SamplerChain> create(const SamplingParams& params);

  // A chain in the given order: stage names separated by ',' or ';' (llama.cpp's --samplers uses ';'),
  // from penalties, top_k, top_p, min_p, temperature (or temp), each at most once, optionally ending in
  // dist or greedy; without one, dist is appended (greedy when temperature <= 0). Errors name the stage
  // and its position.
  static Result<SamplerChain> from_spec(const SamplingParams& params, std::string_view order);

  // One step: [n_vocab] logits -> a token id in [0, n_vocab). kNoToken (-1) when there is nothing to
  // choose from: empty logits, or every logit NaN or -inf (NaN logits are never chosen).
  int32_t sample(std::span<const float> logits);
  // sample(), with kNoToken turned into an error that says why.
  Result<int32_t> try_sample(std::span<const float> logits);

  // Records a token in the penalties' history (the caller decides which: prompt and/or generated ones).
  void accept(int32_t token);
  // Forgets the history and restarts the random stream, so the chain replays as if new.
  void reset();

  // "penalties(1.10,64) -> top_k(40) -> top_p(0.95) -> min_p(0.05) -> temperature(0.80) -> dist(seed 42)"
  std::string describe() const;
  // The seed in use: the requested one, or the one drawn for kRandomSeed.
  uint64_t seed() const { return seed_; }

  // What the filters left at the last sample() (with p filled in when the last stage was dist).
  const Candidates& candidates() const { return candidates_; }

 private:
  SamplerChain(std::vector<FilterStage> filters, SelectionStage selection, uint64_t seed);

  std::vector<FilterStage> filters_;
  SelectionStage selection_;
  uint64_t seed_;
  Candidates candidates_;  // reused across steps to avoid an allocation per token
};

}  // namespace infertune
