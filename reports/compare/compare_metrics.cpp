#include "reports/compare/compare_metrics.h"

#include <fmt/format.h>

#include "sweeps/store/metric_names.h"

namespace infertune {

const std::vector<CompareMetric>& known_compare_metrics() {
  static const std::vector<CompareMetric> metrics{
      {"tg", metric::kGenTokensPerSecond, "t/s", true},
      {"pp", metric::kPromptTokensPerSecond, "t/s", true},
      {"pg", "pg_tps", "t/s", true},
      {"aggregate", metric::kAggregateTokensPerSecond, "t/s", true},
      {"ttft", metric::kTimeToFirstTokenMs, "ms", false},
      {"itl", metric::kInterTokenLatencyMs, "ms", false},
      {"e2e", metric::kEndToEndLatencyMs, "ms", false},
      {"load", metric::kModelLoadMs, "ms", false},
  };
  return metrics;
}

const CompareMetric* find_compare_metric(std::string_view store_name) {
  for (const CompareMetric& m : known_compare_metrics()) {
    if (m.store_name == store_name) return &m;
  }
  return nullptr;
}

std::vector<CompareMetric> default_compare_metrics() {
  std::vector<CompareMetric> metrics;
  for (const CompareMetric& m : known_compare_metrics()) {
    if (m.higher_is_better) metrics.push_back(m);
  }
  return metrics;
}

Result<std::vector<CompareMetric>> parse_metric_list(std::string_view text) {
  std::vector<CompareMetric> metrics;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view word = text.substr(start, comma - start);
    start = comma + 1;
    if (word.empty()) continue;
    if (word == "all") return known_compare_metrics();
    const CompareMetric* found = nullptr;
    for (const CompareMetric& m : known_compare_metrics()) {
      if (m.name == word || m.store_name == word) found = &m;
    }
    if (found == nullptr) {
      std::string known;
      for (const CompareMetric& m : known_compare_metrics()) known += fmt::format("{}{}", known.empty() ? "" : ", ", m.name);
      return fail("--metric: unknown metric '{}' (known: {}, or all)", word, known);
    }
    bool listed = false;
    for (const CompareMetric& m : metrics) listed = listed || m.name == found->name;
    if (!listed) metrics.push_back(*found);
  }
  if (metrics.empty()) return fail("--metric: no metric given");
  return metrics;
}

}  // namespace infertune
