#pragma once
// What `perplexity --kl-divergence` reports for a model against a base model's log-probabilities (logprob_file.h),
// position by position over the same tokens, as llama-perplexity does: the KL divergence KL(base || model) =
// sum_v p_base(v) (log p_base(v) - log p_model(v)), whether both rank the same token first, and the change in the
// probability of the token that came next (delta p = p_model - p_base); with both perplexities.
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/half.h"

namespace infertune {

struct Distribution {
  double mean = 0;
  double mean_error = 0;  // standard error of the mean
  double rms = 0;
  double min = 0, max = 0;
  // 0.1%, 1%, 5%, 10%, median, 90%, 95%, 99%, 99.9% percentiles.
  double p001 = 0, p01 = 0, p05 = 0, p10 = 0, median = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0;
  static Distribution of(std::vector<double> values);
};

struct KldSummary {
  uint64_t positions = 0;
  double ppl_model = 0, ppl_base = 0;
  double ln_ppl_ratio = 0;  // mean of nll_model - nll_base: ln(PPL(model) / PPL(base))
  double ln_ppl_ratio_error = 0;
  Distribution kld;
  double same_top = 0;  // share of positions whose most likely token is the same
  double same_top_error = 0;
  Distribution delta_p;  // p_model(next token) - p_base(next token)
};

class KldAccumulator {
 public:
  // One position: the base's log-probabilities, the model's logits, and the token that came next.
  void add(std::span<const f16_t> base_logprobs, std::span<const float> logits, int32_t next_token);
  KldSummary summary() const;

 private:
  std::vector<double> kld_, delta_p_, nll_model_, nll_base_;
  uint64_t same_top_ = 0;
};

}  // namespace infertune
