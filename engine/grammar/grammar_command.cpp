// `infertune grammar (--grammar G | --grammar-file F | -j SCHEMA | -jf F) [--check TEXT | --check-file F]`: what a
// constraint compiles to, and whether a text meets it; for writing grammars and schemas before serving them (as
// llama.cpp's json_schema_to_grammar.py and llama-gbnf-validator are).
//   - without --check: the GBNF text (a schema's conversion, or the grammar as given), then, on stderr, the number
//     of rules it compiles to; exit 0, or 1 with the error for a constraint that does not compile;
//   - with --check: "accepted", or where the text leaves the grammar ("refused at byte 12 ... after '{"a": 1'"),
//     or that it stops short of a whole sentence; exit 0 when accepted, 1 otherwise.
#include <fmt/format.h>

#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "engine/cli/flag_file.h"
#include "engine/engine_commands.h"
#include "engine/grammar/grammar_flags.h"
#include "engine/grammar/grammar_matcher.h"

namespace infertune {
namespace {

constexpr const char* kCommand = "grammar";

struct GrammarCommandFlags {
  GrammarFlags grammar;
  std::string check;       // --check TEXT
  std::string check_file;  // --check-file F ("-": stdin)
};

Result<std::optional<std::string>> text_to_check(const GrammarCommandFlags& flags) {
  if (!flags.check.empty() && !flags.check_file.empty()) return fail("--check and --check-file cannot both be given");
  if (!flags.check.empty()) return std::optional<std::string>(flags.check);
  if (flags.check_file.empty()) return std::optional<std::string>();
  if (flags.check_file == "-")
    return std::optional<std::string>(std::string(std::istreambuf_iterator<char>(std::cin), {}));
  auto text = read_flag_file("--check-file", flags.check_file);
  if (!text) return text.error();
  return std::optional<std::string>(std::move(*text));
}

// The text's verdict, with the place where it leaves the grammar.
int check_text(const std::shared_ptr<const Grammar>& grammar, const std::string& text) {
  GrammarMatcher matcher(grammar);
  for (size_t i = 0; i < text.size(); ++i) {
    if (!matcher.accept(std::string_view(text).substr(i, 1))) {
      const size_t from = i > 40 ? i - 40 : 0;
      fmt::print("refused at byte {} ({:?}), after {:?}\n", i, text.substr(i, 1), text.substr(from, i - from));
      return 1;
    }
  }
  if (!matcher.can_end()) {
    fmt::print("refused: the text is the start of a sentence of the grammar, not a whole one\n");
    return 1;
  }
  fmt::print("accepted\n");
  return 0;
}

int run_grammar_command(const GrammarCommandFlags& flags) {
  auto source = gbnf_from_flags(flags.grammar);
  if (!source) return report_error(kCommand, source.error().message);
  if (!*source) return report_error(kCommand, "give one of --grammar, --grammar-file, -j/--json-schema, -jf");
  auto grammar = compile_grammar((*source)->gbnf);
  if (!grammar) return report_error(kCommand, fmt::format("{}: {}", (*source)->flag, grammar.error().message));
  auto text = text_to_check(flags);
  if (!text) return report_error(kCommand, text.error().message);
  if (*text) return check_text(*grammar, **text);
  fmt::print("{}", (*source)->gbnf);
  if (!(*source)->gbnf.ends_with('\n')) fmt::print("\n");
  fmt::print(stderr, "grammar: {} rules once groups and repetitions are rules of their own\n", (*grammar)->n_rules());
  return 0;
}

}  // namespace

void add_grammar_command(Subcommands& commands) {
  auto flags = std::make_shared<GrammarCommandFlags>();
  CLI::App* app =
      commands.add(kCommand, "Print the GBNF a grammar or JSON Schema compiles to, or check a text against it",
                   [flags] { return run_grammar_command(*flags); });
  add_grammar_flags(*app, flags->grammar);
  app->add_option("--check", flags->check, "Text to check against the grammar (exit 0: a whole sentence)");
  app->add_option("--check-file", flags->check_file, "File whose text to check ('-': stdin)");
  commands.add_aliases(kCommand, grammar_flag_aliases());
}

}  // namespace infertune
