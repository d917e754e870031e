#include "sweeps/recommend/pareto_front.h"

namespace infertune {
namespace {

bool on_all_three(const Candidate& c) {
  return c.excluded_reason.empty() && c.throughput_tps && c.latency_ms && c.peak_rss_bytes;
}

}  // namespace

std::optional<double> quality_loss(const Candidate& c) {
  if (!c.quality || c.quality->status != QualityStatus::measured) return std::nullopt;
  return c.quality->kld_mean;
}

bool dominates(const Candidate& a, const Candidate& b) {
  const double tp_a = a.throughput_tps->value, tp_b = b.throughput_tps->value;
  const double lat_a = a.latency_ms->value, lat_b = b.latency_ms->value;
  const int64_t mem_a = *a.peak_rss_bytes, mem_b = *b.peak_rss_bytes;
  const std::optional<double> loss_a = quality_loss(a), loss_b = quality_loss(b);
  if (loss_a.has_value() != loss_b.has_value()) return false;  // quality known on one side only: incomparable
  const bool quality_no_worse = !loss_a || *loss_a <= *loss_b;
  const bool quality_better = loss_a && *loss_a < *loss_b;
  const bool no_worse = tp_a >= tp_b && lat_a <= lat_b && mem_a <= mem_b && quality_no_worse;
  const bool better = tp_a > tp_b || lat_a < lat_b || mem_a < mem_b || quality_better;
  return no_worse && better;
}

std::vector<size_t> pareto_front(const std::vector<Candidate>& candidates) {
  std::vector<size_t> front;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!on_all_three(candidates[i])) continue;
    bool dominated = false;
    for (size_t j = 0; j < candidates.size() && !dominated; ++j) {
      dominated = j != i && on_all_three(candidates[j]) && dominates(candidates[j], candidates[i]);
    }
    if (!dominated) front.push_back(i);
  }
  return front;
}

}  // namespace infertune
