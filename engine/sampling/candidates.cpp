#include "engine/sampling/candidates.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace infertune {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kPosInf = std::numeric_limits<float>::infinity();

float rank_key(float logit) { return std::isnan(logit) ? kNegInf : logit; }

}  // namespace

bool ranks_before(const Candidate& a, const Candidate& b) {
  const float ka = rank_key(a.logit);
  const float kb = rank_key(b.logit);
  if (ka != kb) return ka > kb;
  return a.id < b.id;
}

void Candidates::assign(std::span<const float> logits) {
  items_.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    const float logit = std::isnan(logits[i]) ? kNegInf : logits[i];
    items_[i] = Candidate{static_cast<int32_t>(i), logit, 0.0f};
  }
  sorted_ = false;
  in_id_order_ = true;
}

void Candidates::sort_descending() {
  if (sorted_) return;
  std::sort(items_.begin(), items_.end(), ranks_before);
  sorted_ = true;
  in_id_order_ = false;
}

void Candidates::truncate(size_t n) {
  if (n >= items_.size()) return;
  items_.resize(n);
  in_id_order_ = false;
}

void Candidates::keep_best(size_t k) {
  if (k >= items_.size()) {
    sort_descending();
    return;
  }
  if (!sorted_) {
    std::partial_sort(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(k), items_.end(), ranks_before);
  }
  items_.resize(k);
  sorted_ = true;
  in_id_order_ = false;
}

float Candidates::max_logit() const {
  float best = kNegInf;
  for (const Candidate& c : items_) best = std::max(best, rank_key(c.logit));
  return best;
}

void Candidates::softmax() {
  const float max = max_logit();
  if (max == kNegInf || max == kPosInf) {
    // Degenerate cases exp() cannot handle (inf - inf): split the mass evenly over the +inf entries, or
    // give nothing any mass when no entry is possible.
    size_t n_top = 0;
    for (const Candidate& c : items_) n_top += (c.logit == kPosInf);
    for (Candidate& c : items_) c.p = (c.logit == kPosInf) ? 1.0f / static_cast<float>(n_top) : 0.0f;
    return;
  }
  // Subtracting the max keeps exp() in range; the sum is in double so a large vocabulary of tiny terms
  // does not lose mass to rounding.
  double sum = 0.0;
  for (Candidate& c : items_) {
    c.p = std::exp(rank_key(c.logit) - max);
    sum += c.p;
  }
  for (Candidate& c : items_) c.p = static_cast<float>(c.p / sum);
}

}  // namespace infertune
