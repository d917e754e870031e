#pragma once
// The user's sampling settings, with llama.cpp's defaults and meanings (common/common.h, `llama-cli -h`),
// and the range checks that turn a bad value into an error naming its flag.
#include <cstdint>

#include "kernels/result.h"

namespace infertune {

// llama.cpp's LLAMA_DEFAULT_SEED: "pick a random seed". Any other value gives a reproducible sequence.
inline constexpr uint64_t kRandomSeed = 0xFFFFFFFFu;

struct SamplingParams {
  float temperature = 0.8f;  // <= 0: greedy (argmax; ties -> lowest id)
  int32_t top_k = 40;        // <= 0: off
  float top_p = 0.95f;       // >= 1: off; valid range (0, 1]
  float min_p = 0.05f;       // <= 0: off; valid range [0, 1]
  // llama.cpp semantics: a token seen in the window has a positive logit divided by repeat_penalty and a
  // non-positive one multiplied by it. 1.0 is off.
  float repeat_penalty = 1.0f;
  int32_t repeat_last_n = 64;  // window of accepted tokens the penalties look at; 0: off, -1: all of them
  // OpenAI-style, over the same window: logit -= count * frequency_penalty + (count > 0) * presence_penalty.
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  uint64_t seed = kRandomSeed;
};

// Every value in range, else an error naming the flag and the accepted range ("--top-p must be in (0, 1],
// got 1.5"). Negative temperatures are valid (greedy, as in llama.cpp); non-finite floats are not.
Status validate(const SamplingParams& params);

}  // namespace infertune
