#include "engine/grammar/grammar_flags.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <vector>

#include "engine/cli/flag_file.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/json_schema_grammar.h"

namespace infertune {
namespace {

Result<std::string> schema_gbnf(const std::string& text, std::string_view flag) {
  // Ordered: the grammar writes an object's keys in the order the schema lists its properties.
  const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(text, nullptr, false);
  if (schema.is_discarded()) return fail("{}: the schema is not valid JSON", flag);
  auto gbnf = json_schema_to_gbnf(schema);
  if (!gbnf) return fail("{}: {}", flag, gbnf.error().message);
  return gbnf;
}

}  // namespace

void add_grammar_flags(CLI::App& command, GrammarFlags& flags) {
  const char* group = "Constrained output";
  command.add_option("--grammar", flags.grammar, "GBNF grammar the generated text must follow (llama.cpp's notation)")
      ->group(group);
  command.add_option("--grammar-file", flags.grammar_file, "File holding a GBNF grammar")->group(group);
  command
      .add_option("-j,--json-schema", flags.json_schema,
                  "JSON Schema the generated text must follow, e.g. '{\"type\": \"object\"}'")
      ->group(group);
  command.add_option("--json-schema-file", flags.json_schema_file, "File holding a JSON Schema (-jf)")->group(group);
}

std::vector<FlagAlias> grammar_flag_aliases() { return {{"-jf", "--json-schema-file"}}; }

Result<std::optional<FlaggedGrammar>> gbnf_from_flags(const GrammarFlags& flags) {
  std::vector<std::string_view> given;
  if (!flags.grammar.empty()) given.push_back("--grammar");
  if (!flags.grammar_file.empty()) given.push_back("--grammar-file");
  if (!flags.json_schema.empty()) given.push_back("--json-schema");
  if (!flags.json_schema_file.empty()) given.push_back("--json-schema-file");
  if (given.empty()) return std::optional<FlaggedGrammar>();
  if (given.size() > 1) return fail("{} and {} cannot both be given", given[0], given[1]);
  if (!flags.grammar.empty())
    return std::optional<FlaggedGrammar>(FlaggedGrammar{.flag = "--grammar", .gbnf = flags.grammar});
  if (!flags.json_schema.empty()) {
    auto gbnf = schema_gbnf(flags.json_schema, "--json-schema");
    if (!gbnf) return gbnf.error();
    return std::optional<FlaggedGrammar>(FlaggedGrammar{.flag = "--json-schema", .gbnf = std::move(*gbnf)});
  }
  const bool schema = flags.grammar_file.empty();
  const std::string& path = schema ? flags.json_schema_file : flags.grammar_file;
  const std::string flag = fmt::format("{} {}", schema ? "--json-schema-file" : "--grammar-file", path);
  auto text = read_flag_file(schema ? "--json-schema-file" : "--grammar-file", path);
  if (!text) return text.error();
  if (!schema) return std::optional<FlaggedGrammar>(FlaggedGrammar{.flag = flag, .gbnf = std::move(*text)});
  auto gbnf = schema_gbnf(*text, flag);
  if (!gbnf) return gbnf.error();
  return std::optional<FlaggedGrammar>(FlaggedGrammar{.flag = flag, .gbnf = std::move(*gbnf)});
}

Result<std::shared_ptr<const Grammar>> grammar_from_flags(const GrammarFlags& flags) {
  auto source = gbnf_from_flags(flags);
  if (!source) return source.error();
  if (!*source) return std::shared_ptr<const Grammar>();
  auto grammar = compile_grammar((*source)->gbnf);
  if (!grammar) return fail("{}: {}", (*source)->flag, grammar.error().message);
  return std::move(*grammar);
}

}  // namespace infertune
