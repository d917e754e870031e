#pragma once
// The list syntax of llama-bench's test parameters: a flag takes comma-separated values and may be given
// more than once (the values add up), and an integer value may be a range:
//   first-last        first, first+1, ..., last
//   first-last+step   first, first+step, ... while <= last
//   first-last*mult   first, first*mult, ... while <= last
// "1-8+1" or "128-1024*2" expand in place: "-p 16,128-512*2" is 16, 128, 256, 512. Errors name the flag
// and the bad item.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/cli/flag_ranges.h"
#include "kernels/result.h"

namespace infertune {

// A flag's values, all its items and occurrences together, may not number more than this (a typo such as
// 1-100000000, or "1-4096" pasted a hundred times, is an error, not a hang).
inline constexpr size_t kMaxRangeValues = 4096;

// "a,b,c" -> {"a", "b", "c"}; an empty item ("1,,2", a trailing comma) is an error.
Result<std::vector<std::string>> split_list(std::string_view text, std::string_view flag);

// One or more occurrences of an integer flag, each a comma list of values and ranges, in the order given.
// `allow_negative`: a value (not a range bound after the first) may be negative, as -ngl -1.
Result<std::vector<int>> parse_int_list(const std::vector<std::string>& occurrences, std::string_view flag,
                                        bool allow_negative = false);

// The same with every value checked against `allowed`; the error names the flag, the value and the range
// ("-t: -3 is out of range; allowed: 0..1024"), as the single-valued flags' errors do (engine/cli/flag_ranges.h).
Result<std::vector<int>> parse_int_list(const std::vector<std::string>& occurrences, std::string_view flag,
                                        const IntRange& allowed);

// The same for flags whose values are words ("q8_0,f16"); no ranges.
Result<std::vector<std::string>> parse_word_list(const std::vector<std::string>& occurrences, std::string_view flag);

// 0/1 lists (--cpu-strict, -mmp); "true"/"false" are accepted too.
Result<std::vector<bool>> parse_bool_list(const std::vector<std::string>& occurrences, std::string_view flag);

// -pg: every occurrence is one "pp,tg" pair of non-negative counts.
Result<std::vector<std::pair<int, int>>> parse_pair_list(const std::vector<std::string>& occurrences,
                                                         std::string_view flag);

}  // namespace infertune
