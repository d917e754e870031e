#pragma once
// What one side of a comparison measured, whatever it came from (a sweep in a results store, or the blocks
// of one binary in `compare --bin`): per configuration (configuration_key.h), per metric, groups of raw
// values. A group is the unit the statistics resample: one repetition of a stored trial (many values for
// the inter-token latency, one for a throughput), or one bench run (block) of `compare --bin`, where the
// baseline's i-th block and the candidate's i-th block ran next to each other.
#include <map>
#include <string>
#include <vector>

namespace infertune {

struct MeasuredConfiguration {
  std::string key;    // ConfigurationKey::key, or the bench row's parameters
  std::string label;  // for people
  bool ok = true;     // false: the trial or test failed on this side (failure says why)
  std::string failure;
  std::map<std::string, std::vector<std::vector<double>>> groups;  // metric store name -> [group][value]
};

struct MeasuredSide {
  std::string name;         // "baseline" / "candidate"
  std::string description;  // where it came from: "base.db sweep 3 (build 1a2b3c, host ...)"
  std::string host_fingerprint;  // "" when unknown
  std::vector<MeasuredConfiguration> configurations;  // in run order, keys unique
  std::vector<std::string> notes;  // e.g. a configuration seen twice in one sweep
};

}  // namespace infertune
