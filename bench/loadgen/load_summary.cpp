#include "bench/loadgen/load_summary.h"

#include <algorithm>
#include <numeric>

namespace infertune {

Percentiles percentiles(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const auto at = [&](double q) {
    const double pos = q * static_cast<double>(values.size() - 1);
    const auto lo = static_cast<size_t>(pos);
    const size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
  };
  return {.p50 = at(0.50),
          .p95 = at(0.95),
          .p99 = at(0.99),
          .mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size())};
}

LevelSummary summarize(const LevelRun& run, const LoadOptions& options) {
  LevelSummary s{.level = run.level, .wall_s = run.wall_s};
  std::vector<double> ttft, itl, tpot, e2e;
  uint32_t good = 0;
  for (const RequestOutcome& o : run.outcomes) {
    ++s.requests;
    if (!o.ok) {
      if (s.errors++ == 0) s.first_error = o.error;
      continue;
    }
    ttft.push_back(o.ttft_s);
    itl.insert(itl.end(), o.chunk_gaps_s.begin(), o.chunk_gaps_s.end());
    if (o.output_tokens > 1) tpot.push_back(o.tpot_s());
    e2e.push_back(o.e2e_s());
    s.output_tokens += o.output_tokens;
    s.prompt_tokens += o.prompt_tokens;
    const bool meets = (!options.slo_ttft_s || o.ttft_s <= *options.slo_ttft_s) &&
                       (!options.slo_itl_s || o.tpot_s() <= *options.slo_itl_s);
    good += meets ? 1 : 0;
  }
  s.ttft_s = percentiles(std::move(ttft));
  s.itl_s = percentiles(std::move(itl));
  s.tpot_s = percentiles(std::move(tpot));
  s.e2e_s = percentiles(std::move(e2e));
  if (run.wall_s > 0) {
    s.output_tokens_per_s = static_cast<double>(s.output_tokens) / run.wall_s;
    s.requests_per_s = static_cast<double>(s.requests - s.errors) / run.wall_s;
    s.goodput_rps = good / run.wall_s;
  }
  s.slo_attainment = s.requests > 0 ? static_cast<double>(good) / s.requests : 0;
  return s;
}

}  // namespace infertune
