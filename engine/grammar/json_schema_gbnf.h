#pragma once
// Pieces of GBNF text that the JSON Schema converter (json_schema_grammar.h) writes, beyond literals and classes
// (gbnf_text.h): repetitions within the parser's bound on counts, integer ranges as digit
// patterns, keys other than a set of names, rule names.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/gbnf_text.h"
#include "kernels/result.h"

namespace infertune {

// Lengths and counts in a schema above this are refused: the grammar would hold that many copies of a rule.
inline constexpr uint64_t kMaxCount = 1'000'000;

// One character as a JSON string writes it (nlohmann's dump): \" \\ \b \f \n \r \t, \u00XX for other control
// characters, else the character's UTF-8.
std::string json_escaped(uint32_t code_point);

// `item` (an atom: a name, literal, class or parenthesized group) repeated min..max times (nullopt: no most),
// counts above the parser's limit of 10000 split into blocks; empty for {0,0}.
std::string gbnf_repeat(const std::string& item, uint64_t min, std::optional<uint64_t> max);

// The decimal texts (no leading zeros, "-" for negatives, never "-0") of the integers in [low, high], either
// end open; |bounds| <= 1e18 and low <= high. Alternatives: parenthesize to use in a sequence.
std::string gbnf_integer_range(std::optional<int64_t> low, std::optional<int64_t> high);

// A JSON string, quotes included, whose text differs from each of `names` at an unescaped character (or in
// length). Uses the rule `char`. Refuses names longer than 256 characters.
Result<std::string> gbnf_key_other_than(const std::vector<std::string>& names);

// A rule name from a hint: runs of characters outside [a-zA-Z0-9] become '-'. Never a '_', which the rules
// Grammar::parse makes for groups and repetitions use ("root_1").
std::string gbnf_rule_name(std::string_view hint);

// The non-empty parts, with `separator` between them.
std::string join_nonempty(const std::vector<std::string>& parts, std::string_view separator);

}  // namespace infertune
