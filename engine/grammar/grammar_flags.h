#pragma once
// llama.cpp's flags that constrain generated text: --grammar GBNF, --grammar-file FILE, -j/--json-schema SCHEMA,
// -jf/--json-schema-file FILE (`run`: the reply; `serve`: every request that brings no constraint of its own).
#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/cli/flag_aliases.h"

#include "engine/grammar/grammar.h"
#include "kernels/result.h"

namespace infertune {

struct GrammarFlags {
  std::string grammar;           // --grammar
  std::string grammar_file;      // --grammar-file
  std::string json_schema;       // -j, --json-schema
  std::string json_schema_file;  // -jf, --json-schema-file
};

// `flags` must outlive the parse of `command`. The command's aliases must include grammar_flag_aliases().
void add_grammar_flags(CLI::App& command, GrammarFlags& flags);
// -jf, which CLI11 cannot name (flag_aliases.h).
std::vector<FlagAlias> grammar_flag_aliases();

// The GBNF text the flags give (a schema converted), and the flag that gave it, for messages.
struct FlaggedGrammar {
  std::string flag;  // "--grammar", "--json-schema-file cat.json", ...
  std::string gbnf;
};
// nullopt for none. Errors as grammar_from_flags's, but for the grammar's own.
Result<std::optional<FlaggedGrammar>> gbnf_from_flags(const GrammarFlags& flags);

// The grammar the flags give; nullptr for none. Errors name the flag: more than one given, a file that cannot be
// read, a schema that is not JSON, and the grammar's or the schema's own errors.
Result<std::shared_ptr<const Grammar>> grammar_from_flags(const GrammarFlags& flags);

}  // namespace infertune
