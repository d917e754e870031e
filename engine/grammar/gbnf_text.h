#pragma once
// Writing GBNF: literals and character classes with the escapes gbnf_syntax reads back. Used by the JSON Schema
// converter, which writes grammars, and by Grammar::describe, which lists a compiled one.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/grammar.h"

namespace infertune {

// The code points of UTF-8 text (U+FFFD for bytes that are not UTF-8).
std::vector<uint32_t> code_points(std::string_view utf8);

// "text" with GBNF's escapes: printable ASCII as is, the rest as \xHH, \uHHHH or \UHHHHHHHH.
std::string gbnf_literal(std::string_view utf8);
// [ranges] or [^ranges], with the same escapes.
std::string gbnf_class(std::span<const CodePointRange> ranges, bool negated);

}  // namespace infertune
