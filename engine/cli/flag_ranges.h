#pragma once
// The allowed values of numeric flags, and their checks, shared by every command so that a bad value is
// refused the same way wherever it is given: the message names the flag, the value and what is allowed,
//   --top-k: -5 is out of range; allowed: >= 0 (0 = off)
//   -t: -3 is out of range; allowed: -1 (auto), 0 (auto) or 1..1024
// As CLI11 validators the checks run while the command line is parsed, before any model is loaded, and
// the dispatcher (sweeps/main.cpp) exits with status 1. The settings table (engine/settings) checks its
// integer settings with the same IntRange, one value or every element of a list (value_lists.h).
#include <CLI/CLI.hpp>

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"

namespace infertune {

// A value outside [low, high] that still means something (llama.cpp's -1 for "auto" or "no limit").
struct SpecialValue {
  long long value = 0;
  std::string meaning;
};

struct IntRange {
  long long low = 0;
  long long high = std::numeric_limits<int>::max();  // the type's maximum reads as "no upper bound"
  std::vector<SpecialValue> special = {};
  std::string note = {};  // what a value in the range means, when it is not obvious: "0 = off"

  bool allows(long long value) const;
  // "-1 (until end of generation) or >= 0"; "1..1024"; ">= 0 (0 = off)"
  std::string describe() const;
};

// The bounds of a real-valued flag; an open end excludes its bound. Non-finite values are never allowed.
struct RealRange {
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  bool low_open = false;
  bool high_open = false;
  std::string note = {};

  bool allows(double value) const;
  // "[0, 1]", "(0, 1]", "> 0", ">= 0", "any finite number"
  std::string describe() const;
};

// "{value} is out of range; allowed: {allowed}"; with a flag in front ("-t: ...") where given.
std::string out_of_range_message(std::string_view value, const std::string& allowed, std::string_view flag = {});

// The text as a decimal integer in `range`, or an error saying what is allowed (without a flag name).
Result<long long> parse_int_in_range(std::string_view text, const IntRange& range);

// For CLI11's ->transform(): the text must be a decimal integer in `range` (the message says what is allowed
// otherwise). It is rewritten in canonical decimal, so CLI11's own conversion, which reads "010" as octal
// and "0x10" as hex, sees the number that was checked.
CLI::Validator int_flag_range(IntRange range);

// For CLI11's ->check(): the text must be a finite decimal number in `range`.
CLI::Validator real_flag_range(RealRange range);

}  // namespace infertune
