#include "engine/sampling/penalties_stage.h"

#include <fmt/format.h>

#include "engine/sampling/stage_format.h"

namespace infertune {

PenaltiesStage::PenaltiesStage(float repeat, int32_t last_n, float frequency, float presence)
    : repeat_(repeat), last_n_(last_n), frequency_(frequency), presence_(presence) {}

bool PenaltiesStage::enabled() const {
  return last_n_ != 0 && (repeat_ != 1.0f || frequency_ != 0.0f || presence_ != 0.0f);
}

void PenaltiesStage::accept(int32_t token) {
  if (last_n_ == 0 || token < 0) return;
  window_.push_back(token);
  if (last_n_ > 0 && window_.size() > static_cast<size_t>(last_n_)) window_.pop_front();
}

float PenaltiesStage::penalized(float logit, int32_t count) const {
  // Dividing a negative logit would raise it, so negative logits are multiplied instead: either way the
  // token becomes less likely.
  logit = logit <= 0.0f ? logit * repeat_ : logit / repeat_;
  return logit - (static_cast<float>(count) * frequency_ + presence_);
}

void PenaltiesStage::apply(Candidates& candidates) {
  if (!enabled() || window_.empty() || candidates.empty()) return;
  counts_.clear();
  for (int32_t token : window_) ++counts_[token];

  const bool by_index = candidates.in_id_order();
  std::span<Candidate> items = candidates.mutable_items();
  if (by_index) {
    // Still the whole vocabulary in id order: touch only the (few) tokens in the window.
    for (const auto& [token, count] : counts_) {
      if (static_cast<size_t>(token) < items.size()) items[token].logit = penalized(items[token].logit, count);
    }
    return;
  }
  for (Candidate& c : items) {
    auto it = counts_.find(c.id);
    if (it != counts_.end()) c.logit = penalized(c.logit, it->second);
  }
}

std::string PenaltiesStage::describe() const {
  if (!enabled()) return "penalties(off)";
  std::string text = fmt::format("penalties({},{}", format_param(repeat_), last_n_);
  if (frequency_ != 0.0f || presence_ != 0.0f) {
    text += fmt::format(",freq {},presence {}", format_param(frequency_), format_param(presence_));
  }
  return text + ")";
}

}  // namespace infertune
