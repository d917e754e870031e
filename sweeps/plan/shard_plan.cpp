#include "sweeps/plan/shard_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>

#include "sweeps/store/stable_hash.h"

namespace infertune {
namespace {

Result<int> positive_int(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 1) return fail("");
  return value;
}

// Group indices in the order of their key hashes: independent of --order.
std::vector<size_t> groups_by_key_hash(const SweepPlan& plan) {
  std::vector<std::string> hashes;
  for (const TrialGroup& g : plan.groups) hashes.push_back(config_hash(g.key));
  std::vector<size_t> order(plan.groups.size());
  std::iota(order.begin(), order.end(), 0);
  std::ranges::sort(order, [&](size_t a, size_t b) { return hashes[a] < hashes[b]; });
  return order;
}

}  // namespace

std::string ShardSlice::text() const { return fmt::format("{}/{}", index, count); }

Result<ShardSlice> parse_shard(std::string_view text, std::string_view where) {
  const size_t slash = text.find('/');
  const auto index = positive_int(text.substr(0, slash));
  const auto count = slash == std::string_view::npos ? Result<int>(fail("")) : positive_int(text.substr(slash + 1));
  if (!index || !count || *index > *count || *count > kMaxShards) {
    return fail("{} '{}': expected I/N, the I-th of N slices (1 <= I <= N <= {}), such as 2/3", where, text,
                kMaxShards);
  }
  return ShardSlice{.index = *index, .count = *count};
}

std::vector<int> shard_assignment(const SweepPlan& plan, int count) {
  std::vector<int> slice(plan.trials.size(), 1);
  size_t dealt = 0;
  for (size_t g : groups_by_key_hash(plan)) {
    std::vector<size_t> trials = plan.groups[g].trials;
    std::ranges::sort(trials, [&](size_t a, size_t b) { return plan.trials[a].hash < plan.trials[b].hash; });
    for (size_t t : trials) slice[plan.trials[t].index] = static_cast<int>(dealt++ % count) + 1;
  }
  return slice;
}

SweepPlan shard_of(const SweepPlan& plan, const ShardSlice& slice) {
  const std::vector<int> assignment = shard_assignment(plan, slice.count);
  SweepPlan out;
  out.spec_hash = plan.spec_hash;
  for (const TrialGroup& group : plan.groups) {
    TrialGroup kept{.key = group.key, .trials = {}};
    for (size_t t : group.trials) {
      if (assignment[plan.trials[t].index] != slice.index) continue;
      PlannedTrial trial = plan.trials[t];
      trial.index = out.trials.size();
      trial.group = out.groups.size();
      kept.trials.push_back(out.trials.size());
      out.trials.push_back(std::move(trial));
    }
    if (!kept.trials.empty()) out.groups.push_back(std::move(kept));
  }
  return out;
}

}  // namespace infertune
