#include "engine/quality/kl_divergence.h"

#include <algorithm>
#include <cmath>

namespace infertune {
namespace {

// The value below which a share q of the sorted values lies (nearest rank).
double percentile(const std::vector<double>& sorted, double q) {
  const size_t i = static_cast<size_t>(std::llround(q * static_cast<double>(sorted.size() - 1)));
  return sorted[std::min(i, sorted.size() - 1)];
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

}  // namespace

Distribution Distribution::of(std::vector<double> values) {
  Distribution d;
  if (values.empty()) return d;
  const double n = static_cast<double>(values.size());
  double sum = 0, sum2 = 0;
  for (double x : values) {
    sum += x;
    sum2 += x * x;
  }
  d.mean = sum / n;
  d.rms = std::sqrt(sum2 / n);
  const double variance = sum2 / n - d.mean * d.mean;
  d.mean_error = values.size() > 1 && variance > 0 ? std::sqrt(variance / (n - 1)) : 0;
  std::sort(values.begin(), values.end());
  d.min = values.front();
  d.max = values.back();
  d.p001 = percentile(values, 0.001);
  d.p01 = percentile(values, 0.01);
  d.p05 = percentile(values, 0.05);
  d.p10 = percentile(values, 0.10);
  d.median = percentile(values, 0.5);
  d.p90 = percentile(values, 0.90);
  d.p95 = percentile(values, 0.95);
  d.p99 = percentile(values, 0.99);
  d.p999 = percentile(values, 0.999);
  return d;
}

void KldAccumulator::add(std::span<const f16_t> base_logprobs, std::span<const float> logits, int32_t next_token) {
  const size_t n = logits.size();
  // The model's log-softmax in double precision.
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - max);
  const double log_sum = std::log(sum) + max;
  double kld = 0;
  size_t base_top = 0, model_top = 0;
  float base_best = -INFINITY;
  for (size_t v = 0; v < n; ++v) {
    const double lp_base = f16_to_f32(base_logprobs[v]);
    const double lp_model = static_cast<double>(logits[v]) - log_sum;
    kld += std::exp(lp_base) * (lp_base - lp_model);
    if (lp_base > base_best) {
      base_best = static_cast<float>(lp_base);
      base_top = v;
    }
    if (logits[v] > logits[model_top]) model_top = v;
  }
  const auto t = static_cast<size_t>(next_token);
  const double lp_base_next = f16_to_f32(base_logprobs[t]);
  const double lp_model_next = static_cast<double>(logits[t]) - log_sum;
  kld_.push_back(kld);
  delta_p_.push_back(std::exp(lp_model_next) - std::exp(lp_base_next));
  nll_model_.push_back(-lp_model_next);
  nll_base_.push_back(-lp_base_next);
  same_top_ += base_top == model_top;
}

KldSummary KldAccumulator::summary() const {
  KldSummary s;
  s.positions = kld_.size();
  if (kld_.empty()) return s;
  const double n = static_cast<double>(s.positions);
  s.ppl_model = std::exp(mean_of(nll_model_));
  s.ppl_base = std::exp(mean_of(nll_base_));
  std::vector<double> ratio(nll_model_.size());
  for (size_t i = 0; i < ratio.size(); ++i) ratio[i] = nll_model_[i] - nll_base_[i];
  const Distribution r = Distribution::of(ratio);
  s.ln_ppl_ratio = r.mean;
  s.ln_ppl_ratio_error = r.mean_error;
  s.kld = Distribution::of(kld_);
  s.delta_p = Distribution::of(delta_p_);
  s.same_top = static_cast<double>(same_top_) / n;
  s.same_top_error = n > 1 ? std::sqrt(s.same_top * (1 - s.same_top) / (n - 1)) : 0;
  return s;
}

}  // namespace infertune
