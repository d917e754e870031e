#pragma once
// A JSON Schema `pattern` (an ECMA-262 regular expression) as GBNF over the JSON text of a string's content:
// the regex speaks of the decoded characters, the grammar of what a model writes between the quotes, so a '"'
// in the regex becomes the escape \" in the grammar. The subset, and what is refused, is listed in
// json_schema_grammar.h.
#include <string>
#include <string_view>

#include "kernels/result.h"

namespace infertune {

struct TranslatedPattern {
  std::string expression;       // a GBNF sequence (maybe empty: the empty string); uses no rules
  bool anchored_start = false;  // began with ^: otherwise anything may come before a match
  bool anchored_end = false;    // ended with $
};

// `where` names the schema in errors: json_schema: "pattern" at <where> is not supported: <what> at character N.
Result<TranslatedPattern> translate_pattern(std::string_view pattern, std::string_view where);

}  // namespace infertune
