#include "engine/sampling/truncation_stages.h"

#include <fmt/format.h>

#include <cmath>

#include "engine/sampling/stage_format.h"

namespace infertune {

void TopKStage::apply(Candidates& candidates) const {
  if (k_ <= 0 || static_cast<size_t>(k_) >= candidates.size()) return;
  candidates.keep_best(static_cast<size_t>(k_));
}

std::string TopKStage::describe() const { return k_ <= 0 ? "top_k(off)" : fmt::format("top_k({})", k_); }

void TopPStage::apply(Candidates& candidates) const {
  if (!(p_ < 1.0f) || candidates.empty()) return;
  candidates.sort_descending();
  candidates.softmax();
  // The sum runs in double so that a long tail of tiny probabilities still adds up; a list whose total
  // rounds to just under p keeps everything, which is what p means then.
  const std::span<const Candidate> items = candidates.items();
  double cumulative = 0.0;
  size_t keep = items.size();
  for (size_t i = 0; i < items.size(); ++i) {
    cumulative += items[i].p;
    if (cumulative >= static_cast<double>(p_)) {
      keep = i + 1;
      break;
    }
  }
  candidates.truncate(keep);
}

std::string TopPStage::describe() const {
  return p_ < 1.0f ? fmt::format("top_p({})", format_param(p_)) : "top_p(off)";
}

void MinPStage::apply(Candidates& candidates) const {
  if (!(p_ > 0.0f)) return;
  const float max = candidates.max_logit();
  if (max == -std::numeric_limits<float>::infinity()) return;  // nothing possible: nothing to compare to
  // p_i >= p * p_max  <=>  exp(logit_i - logit_max) >= p  <=>  logit_i >= logit_max + log(p): no softmax
  // needed. The max itself always passes (log(p) <= 0 for p <= 1), so at least one candidate stays.
  const double threshold = static_cast<double>(max) + std::log(static_cast<double>(p_));
  candidates.keep_if([&](const Candidate& c) { return c.logit == max || static_cast<double>(c.logit) >= threshold; });
}

std::string MinPStage::describe() const {
  return p_ > 0.0f ? fmt::format("min_p({})", format_param(p_)) : "min_p(off)";
}

}  // namespace infertune
