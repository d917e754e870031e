#pragma once
// `infertune sweep --shard I/N`: the I-th of N disjoint slices of a sweep plan, for running one sweep on
// several machines (a Slurm job array, sweeps/cli/slurm_job.h), each slice into its own results store, merged
// afterwards (`infertune merge`, sweeps/store/store_merge.h).
//
// Which slice a trial belongs to depends only on the plan's trial configurations, never on the run order
// (--order) or on what a store already holds, so a resumed or requeued slice runs the same trials. Slices are
// balanced: within each reload group (in the order of the groups' key hashes) the trials, in the order of their
// configuration hashes, are dealt to the slices in turn, the count carrying over from group to group. Every
// slice then holds its share of every group — the same mix of models, settings and workloads — and the slice
// sizes differ by one trial at most. Skipped trials are dealt like the others (where a trial is skipped
// depends on the machine), so the slices of one spec are the same on every machine that plans it the same way.
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"
#include "sweeps/plan/trial_plan.h"

namespace infertune {

struct ShardSlice {
  int index = 1;  // 1-based
  int count = 1;
  std::string text() const;  // "2/3"
};

// "I/N" with 1 <= I <= N <= kMaxShards; errors name `where` (the flag).
inline constexpr int kMaxShards = 10000;
Result<ShardSlice> parse_shard(std::string_view text, std::string_view where);

// The slice (1-based) each trial of `plan` belongs to, by PlannedTrial::index.
std::vector<int> shard_assignment(const SweepPlan& plan, int count);

// The plan with only the slice's trials, in their run order, re-indexed; groups left without trials are dropped.
SweepPlan shard_of(const SweepPlan& plan, const ShardSlice& slice);

}  // namespace infertune
