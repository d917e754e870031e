#pragma once
// Repetition penalties over a window of the most recently accepted tokens. For a token seen `count` > 0
// times in the window (llama.cpp's semantics):
//   logit' = logit <= 0 ? logit * repeat : logit / repeat       (repeat-penalty; 1.0 is off)
//   logit' -= count * frequency + presence                      (OpenAI-style; 0.0 is off)
// Tokens outside the window are untouched.
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>

#include "engine/sampling/candidates.h"

namespace infertune {

class PenaltiesStage {
 public:
  // last_n: window length in accepted tokens; 0: off; -1: every token accepted since the last reset.
  PenaltiesStage(float repeat, int32_t last_n, float frequency, float presence);

  void apply(Candidates& candidates);
  void accept(int32_t token);
  void reset() { window_.clear(); }
  std::string describe() const;

  bool enabled() const;

 private:
  float penalized(float logit, int32_t count) const;

  float repeat_;
  int32_t last_n_;
  float frequency_;
  float presence_;
  std::deque<int32_t> window_;                   // [<= last_n] oldest first
  std::unordered_map<int32_t, int32_t> counts_;  // token -> occurrences in window_; rebuilt per apply
};

}  // namespace infertune
