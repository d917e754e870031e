#pragma once
// A set of CPUs named by their OS indices (the numbers `taskset`, `numactl` and /proc/cpuinfo use, hwloc's
// "P#"), and the parser of the `-C/--cpu-mask` flag.
//
// Accepted spellings of -C:
//   - a hex mask as in llama.cpp, "0xF0" or "F0": bit i selects CPU i, any length ("0x1" + 64 zeros is CPU 256);
//   - a range list, "0-3,8,10-11": recognised by a ',' or a '-' in the text.
// A bare number without either ("8") is hex, as llama.cpp reads it (CPU 3); a single CPU as a range list is
// written "8-8". CPU indices above kMaxCpuIndex are refused, so a typo cannot allocate without bound.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"

namespace infertune {

inline constexpr unsigned kMaxCpuIndex = 65535;

class CpuSet {
 public:
  CpuSet() = default;
  explicit CpuSet(std::vector<unsigned> cpus);  // any order, duplicates allowed

  static CpuSet range(unsigned first, unsigned last);  // [first, last]

  bool empty() const { return cpus_.empty(); }
  size_t size() const { return cpus_.size(); }
  bool contains(unsigned cpu) const;
  const std::vector<unsigned>& cpus() const { return cpus_; }  // ascending, unique

  CpuSet intersect(const CpuSet& other) const;
  CpuSet unite(const CpuSet& other) const;
  CpuSet minus(const CpuSet& other) const;

  // "0-3,8" (empty set: "none").
  std::string to_string() const;

  friend bool operator==(const CpuSet&, const CpuSet&) = default;

 private:
  std::vector<unsigned> cpus_;
};

// Parses the -C/--cpu-mask text (see above); errors name the flag and the offending part.
Result<CpuSet> parse_cpu_mask(std::string_view text);

}  // namespace infertune
