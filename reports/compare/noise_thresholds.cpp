#include "reports/compare/noise_thresholds.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "reports/compare/compare_statistics.h"
#include "reports/compare/store_side.h"
#include "sweeps/store/statistics.h"

namespace infertune {
namespace {

struct SweepRow {
  int64_t id = 0;
  std::string spec_hash;
  int64_t build_id = 0;
  int64_t host_id = 0;
};

// Sweeps grouped by (host, build, spec), each group in the order run; only groups of two or more.
Result<std::vector<std::vector<int64_t>>> aa_groups(ResultsStore& store) {
  auto query = store.database().prepare(
      "SELECT id, spec_hash, build_id, host_id FROM sweeps WHERE status <> 'running' ORDER BY id");
  if (!query) return query.error();
  std::map<std::tuple<int64_t, int64_t, std::string>, std::vector<int64_t>> groups;
  for (;;) {
    auto row = query->step();
    if (!row) return row.error();
    if (!*row) break;
    groups[{query->column_int(3), query->column_int(2), query->column_text(1)}].push_back(query->column_int(0));
  }
  std::vector<std::vector<int64_t>> result;
  for (auto& [key, ids] : groups) {
    if (ids.size() >= 2) result.push_back(std::move(ids));
  }
  return result;
}

void add_ratios(const MeasuredSide& first, const MeasuredSide& second, std::map<std::string, std::vector<double>>& into) {
  std::map<std::string, const MeasuredConfiguration*> by_key;
  for (const MeasuredConfiguration& c : second.configurations) by_key.emplace(c.key, &c);
  for (const MeasuredConfiguration& a : first.configurations) {
    auto it = by_key.find(a.key);
    if (it == by_key.end() || !a.ok || !it->second->ok) continue;
    for (const auto& [metric, groups] : a.groups) {
      auto other = it->second->groups.find(metric);
      if (other == it->second->groups.end() || groups.empty() || other->second.empty()) continue;
      const double x = pooled_median(groups);
      const double y = pooled_median(other->second);
      if (x > 0 && y > 0 && std::isfinite(x) && std::isfinite(y)) into[metric].push_back(y / x);
    }
  }
}

}  // namespace

double threshold_from_aa_ratios(const std::vector<double>& ratios, double floor) {
  if (ratios.empty()) return floor;
  std::vector<double> deviations;
  for (double r : ratios) deviations.push_back(std::fabs(r - 1));
  std::sort(deviations.begin(), deviations.end());
  return std::max(floor, percentile_of_sorted(deviations, 0.95));
}

Result<NoiseThresholds> noise_thresholds_from_store(const std::filesystem::path& path, double floor) {
  auto store = ResultsStore::open_read_only(path);
  if (!store) return fail("--noise-from: {}", store.error().message);
  auto groups = aa_groups(*store);
  if (!groups) return groups.error();
  if (groups->empty()) {
    return fail("--noise-from: {} holds no A/A runs (two finished sweeps of the same spec and build on one host)",
                path.string());
  }
  NoiseThresholds noise;
  std::map<std::string, std::vector<double>> ratios;
  size_t pairs = 0;
  for (const std::vector<int64_t>& ids : *groups) {
    std::vector<MeasuredSide> sides;
    for (int64_t id : ids) {
      auto side = read_sweep_side(*store, id, "A/A");
      if (!side) return side.error();
      sides.push_back(std::move(*side));
    }
    if (std::find(noise.host_fingerprints.begin(), noise.host_fingerprints.end(), sides.front().host_fingerprint) ==
        noise.host_fingerprints.end()) {
      noise.host_fingerprints.push_back(sides.front().host_fingerprint);
    }
    for (size_t i = 0; i + 1 < sides.size(); ++i, ++pairs) add_ratios(sides[i], sides[i + 1], ratios);
  }
  for (const auto& [metric, values] : ratios) {
    noise.by_metric[metric] = threshold_from_aa_ratios(values, floor);
    noise.ratio_count[metric] = values.size();
  }
  noise.description = fmt::format("A/A runs in {}: {} group{}, {} sweep pair{}", path.string(), groups->size(),
                                  groups->size() == 1 ? "" : "s", pairs, pairs == 1 ? "" : "s");
  return noise;
}

}  // namespace infertune
