#pragma once
// `infertune merge OUT.db IN.db ...`: the sweeps of several results stores in one — the slices of a sharded
// sweep (sweeps/plan/shard_plan.h) run on several machines, or the stores of a fleet.
//
// Rows that describe the same thing are one row in OUT: a host by its fingerprint (so machines of one kind are
// one host, and `recommend`/`report` speak per host class), a build by all of its fields, a model by its
// content hash. A slice of a sharded sweep goes into OUT's sweep of the same spec hash, host, build and number of
// slices, and the slices add up (shard "1/3" and "2/3" make "1,2/3"; all three, the whole plan); any other sweep
// becomes a sweep of its own (two runs of one spec stay two, as `compare --noise-from` needs), unless it is the same
// run merged again. A trial is kept per sweep and configuration hash: one OUT already has is left as it was, so
// merging the same input again changes nothing. (Two runs of one split, merged into one OUT, are one sweep: merge an
// A/A pair of sharded sweeps into two stores.) Trials keep their raw samples and summaries as measured; variants keep
// their quality rows. Recommendations are not copied (they are recomputed for the merged sweep by the command).
//
// Each input is merged in one transaction: an input that fails leaves OUT as it was before it. Inputs must be
// at this infertune's schema version: stores written by another version are refused, naming both versions.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/result.h"
#include "sweeps/store/results_store.h"

namespace infertune {

struct MergedSweep {
  int64_t source_sweep = 0;  // the sweep's id in the input
  int64_t sweep_id = 0;      // the sweep of OUT it went into
  bool created = false;      // a new sweep of OUT, not one it had
  std::string shard;         // OUT's sweep's slices after the merge ("": a sweep of the whole plan)
  size_t trials_added = 0;
  size_t trials_present = 0;  // trials OUT already had (same sweep, configuration hash), kept as they were
};

Result<std::vector<MergedSweep>> merge_store(ResultsStore& out, const std::filesystem::path& input);

// The union of two sweeps' slices ("" : the whole plan): "1/3" and "3/3" give "1,3/3", all three "1,2,3/3".
// Errors when the two split the plan into different numbers of slices.
Result<std::string> union_of_shards(const std::string& a, const std::string& b);

// True for "" (a sweep of the whole plan) and for a shard text that names all N slices ("1,2,3/3").
bool holds_every_slice(const std::string& shard);

}  // namespace infertune
