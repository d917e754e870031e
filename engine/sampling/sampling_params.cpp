#include "engine/sampling/sampling_params.h"

#include <cmath>

namespace infertune {

Status validate(const SamplingParams& p) {
  // NaN fails every comparison, so each range test is written as "inside", negated.
  if (!std::isfinite(p.temperature)) return fail("--temp must be a finite number, got {}", p.temperature);
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) return fail("--top-p must be in (0, 1], got {}", p.top_p);
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) return fail("--min-p must be in [0, 1], got {}", p.min_p);
  // Zero would divide positive logits by zero; a negative factor would flip their sign.
  if (!(p.repeat_penalty > 0.0f && std::isfinite(p.repeat_penalty))) {
    return fail("--repeat-penalty must be a finite number > 0 (1.0 is off), got {}", p.repeat_penalty);
  }
  if (p.repeat_last_n < -1) {
    return fail("--repeat-last-n must be >= -1 (0: off, -1: the whole history), got {}", p.repeat_last_n);
  }
  if (!std::isfinite(p.frequency_penalty)) {
    return fail("--frequency-penalty must be a finite number, got {}", p.frequency_penalty);
  }
  if (!std::isfinite(p.presence_penalty)) {
    return fail("--presence-penalty must be a finite number, got {}", p.presence_penalty);
  }
  return Status::success();
}

}  // namespace infertune
