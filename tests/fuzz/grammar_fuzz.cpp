// libFuzzer target for GBNF grammars (engine/grammar/grammar.h, grammar_matcher.h), which a network client sends
// (llama-server's `grammar` field) and a user passes to --grammar: the parser, the compiler's checks, and the matcher
// over arbitrary bytes.
//
// Input encoding (seeds can be written by hand with printf):
//   byte 0: where the text is cut in two (its value modulo the text's length + 1);
//   then the GBNF source, 0x1E (ASCII RS), and the text to match (any bytes).
//   e.g. printf '\x02root ::= "a" [0-9]+\x1ea12' cuts "a12" into "a1" + "2".
//
// Properties checked on every input; a violation prints what failed and traps, which libFuzzer reports as a crash:
//   - nothing crashes, hangs or over-allocates (ASan/UBSan, -rss_limit_mb, -timeout): the parser bounds repetition
//     counts, the compiler refuses left recursion, the matcher bounds the parse stacks of a step;
//   - a refused grammar has a message that starts with "grammar";
//   - compile_grammar refuses exactly the parsed grammars whose start overflows the matcher;
//   - the matcher takes text in pieces as it takes it whole: allows(text) == (accept(first) && allows(second)), and
//     after accepting both pieces can_end() is what grammar_accepts(text) says; a refused piece changes nothing;
//   - grammar_accepts is deterministic, and describe() lists every rule, a line each, in order.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_matcher.h"
#include "fuzz_check.h"

namespace {

using namespace infertune;
using fuzz::check;

void check_pieces(const std::shared_ptr<const Grammar>& grammar, std::string_view text, size_t cut) {
  const std::string_view first = text.substr(0, cut);
  const std::string_view second = text.substr(cut);
  GrammarMatcher whole(grammar);
  const bool allowed = whole.allows(text);
  GrammarMatcher pieces(grammar);
  const bool can_end_before = pieces.can_end();
  const bool first_taken = pieces.accept(first);
  if (!first_taken) {
    check(pieces.can_end() == can_end_before, "a refused piece changes nothing");
    check(!allowed, "text refused in pieces is refused whole");
    return;
  }
  check(pieces.allows(second) == allowed, "text allowed in pieces exactly when whole");
  if (!allowed) return;
  check(pieces.accept(second), "accept takes what allows allows");
  const bool accepted = grammar_accepts(*grammar, text);
  check(pieces.can_end() == accepted, "can_end after the pieces is grammar_accepts of the whole");
  check(grammar_accepts(*grammar, text) == accepted, "grammar_accepts is deterministic");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t separator = input.find('\x1e');
  const std::string_view gbnf = input.substr(0, separator);
  const std::string_view text = separator == std::string_view::npos ? std::string_view() : input.substr(separator + 1);

  auto parsed = Grammar::parse(gbnf);
  auto compiled = compile_grammar(gbnf);
  if (!parsed) {
    check(parsed.error().message.starts_with("grammar"), "a parse error starts with \"grammar\"");
    check(!compiled, "compile_grammar refuses what parse refuses");
    return 0;
  }
  auto grammar = std::make_shared<const Grammar>(std::move(*parsed));
  check(compiled.ok() == !GrammarMatcher(grammar).overflowed(), "compile_grammar refuses exactly an overflowing start");
  // describe() lists the rules in order, a line each: "name ::= ...".
  const std::string listing = grammar->describe();
  size_t line_start = 0;
  for (size_t r = 0; r < grammar->n_rules(); ++r) {
    const std::string head = std::string(grammar->rule_name(static_cast<uint32_t>(r))) + " ::=";
    check(listing.compare(line_start, head.size(), head) == 0, "describe lists every rule, in order");
    const size_t end = listing.find('\n', line_start);
    check(end != std::string::npos, "describe ends each rule with a newline");
    line_start = end + 1;
  }
  if (!compiled) return 0;
  check_pieces(grammar, text, data[0] % (text.size() + 1));
  return 0;
}
