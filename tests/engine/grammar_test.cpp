// GBNF grammars: the parser's notation and errors, and the matcher's language, held to hand-checked sentences
// and, for a grammar of balanced parentheses, to a counter on every short string of its alphabet.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_matcher.h"

namespace infertune {
namespace {

Grammar parsed(std::string_view gbnf) {
  auto grammar = Grammar::parse(gbnf);
  EXPECT_TRUE(grammar) << (grammar ? "" : grammar.error().message);
  return grammar ? std::move(*grammar) : *Grammar::parse("root ::= \"\"");
}

std::string parse_error(std::string_view gbnf) {
  auto grammar = Grammar::parse(gbnf);
  EXPECT_FALSE(grammar) << gbnf;
  return grammar ? "" : grammar.error().message;
}

TEST(Grammar, LiteralsAlternativesAndClasses) {
  const Grammar g = parsed(R"(root ::= answer "."   # a comment
answer ::= "yes" | "no" | [0-9]+ ("," [0-9]+)*
)");
  for (const char* text : {"yes.", "no.", "7.", "12,3,456."}) EXPECT_TRUE(grammar_accepts(g, text)) << text;
  for (const char* text : {"yes", "maybe.", ".", "12,.", "1,2,", "Yes.", "no.."}) {
    EXPECT_FALSE(grammar_accepts(g, text)) << text;
  }
}

TEST(Grammar, NegatedClassesAnyCharacterAndEscapes) {
  const Grammar g = parsed(R"(root ::= "\"" [^"\\\n]* "\"" . "\x41\u00e9\t")");
  EXPECT_TRUE(grammar_accepts(g, "\"abc d\"zAé\t"));
  EXPECT_TRUE(grammar_accepts(g, "\"\"€Aé\t"));  // '.' takes a multi-byte character
  EXPECT_FALSE(grammar_accepts(g, "\"a\"b\"zAé\t"));
  EXPECT_FALSE(grammar_accepts(g, "\"a\nb\"zAé\t"));
  EXPECT_FALSE(grammar_accepts(g, "\"ab\"zAe\t"));
}

TEST(Grammar, RepetitionCounts) {
  const Grammar g = parsed("root ::= \"a\"{2} \"b\"{1,3} \"c\"{2,} \"d\"? (\"xy\"){0,2}\n");
  for (const char* text : {"aabcc", "aabbbccccd", "aabccxyxy", "aabbccdxy"}) {
    EXPECT_TRUE(grammar_accepts(g, text)) << text;
  }
  for (const char* text : {"abcc", "aaabcc", "aacc", "aabbbbcc", "aabc", "aabccdd", "aabccxyxyxy", "aabccx"}) {
    EXPECT_FALSE(grammar_accepts(g, text)) << text;
  }
}

TEST(Grammar, GroupsSpanLinesAndAlternativesContinueAfterTheBar) {
  const Grammar g = parsed(R"(
root ::= (
    "x" |
    "y" item
  ) item?
item ::= [a-c]
)");
  for (const char* text : {"x", "xa", "ya", "yab"}) EXPECT_TRUE(grammar_accepts(g, text)) << text;
  for (const char* text : {"y", "xab", "z"}) EXPECT_FALSE(grammar_accepts(g, text)) << text;
}

TEST(Grammar, RecursionThatConsumesIsAllowed) {
  const Grammar g = parsed("root ::= \"(\" root \")\" root | \"\"\n");
  for (const char* text : {"", "()", "(())()", "((()))"}) EXPECT_TRUE(grammar_accepts(g, text)) << text;
  for (const char* text : {"(", ")(", "(()", "())"}) EXPECT_FALSE(grammar_accepts(g, text)) << text;
}

// The matcher against a counter, on every string of up to 10 characters over ( ) x.
TEST(Grammar, BalancedParenthesesAgreeWithACounterOnEveryShortString) {
  const Grammar g = parsed("root ::= item*\nitem ::= \"x\" | \"(\" root \")\"\n");
  auto balanced = [](const std::string& s) {
    int depth = 0;
    for (char c : s) {
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      if (depth < 0) return false;
    }
    return depth == 0;
  };
  size_t accepted = 0;
  std::string text;
  for (size_t length = 0; length <= 10; ++length) {
    size_t count = 1;
    for (size_t i = 0; i < length; ++i) count *= 3;
    for (size_t n = 0; n < count; ++n) {
      text.clear();
      for (size_t i = 0, v = n; i < length; ++i, v /= 3) text += "()x"[v % 3];
      ASSERT_EQ(grammar_accepts(g, text), balanced(text)) << text;
      accepted += balanced(text);
    }
  }
  EXPECT_GT(accepted, 1000u);
}

TEST(Grammar, TheMatcherTakesTextInPiecesAndCharactersSplitAcrossThem) {
  auto g = std::make_shared<const Grammar>(parsed("root ::= \"é\" [a-z]+ \"€\"\n"));
  GrammarMatcher m(g);
  EXPECT_FALSE(m.can_end());
  EXPECT_TRUE(m.accept("\xC3"));  // the first byte of é
  EXPECT_FALSE(m.allows("a"));    // é is not finished
  EXPECT_TRUE(
      m.accept("\xA9"
               "ab"));                 // its last byte, then letters
  EXPECT_FALSE(m.allows("\xC3"));      // a two-byte character cannot be in [a-z] or be €
  EXPECT_TRUE(m.allows("\xE2\x82"));   // the start of € (E2 82 AC)
  EXPECT_FALSE(m.allows("\xE2\x80"));  // E2 80 xx is U+2000..U+203F: not €
  EXPECT_FALSE(m.allows("\xFF"));      // not UTF-8
  EXPECT_FALSE(m.allows("\xF0\x80"));  // F0 80 can only start an overlong form
  EXPECT_FALSE(m.allows("\xC1\xA1"));  // an overlong 'a'
  EXPECT_FALSE(m.allows("\xE0\x81\xA1"));
  EXPECT_FALSE(m.can_end());
  EXPECT_TRUE(m.accept("\xE2\x82\xAC"));
  EXPECT_TRUE(m.can_end());
  EXPECT_FALSE(m.can_continue());
  EXPECT_FALSE(m.accept("x"));
  EXPECT_TRUE(m.can_end());  // a refused piece changes nothing
}

TEST(Grammar, ErrorsNameTheLineAndColumn) {
  EXPECT_EQ(parse_error("root ::= \"a\"\nanswer \"b\""),
            "grammar line 2, column 8: expected '::=' after the rule name 'answer'");
  EXPECT_EQ(parse_error("root ::= \"abc"), "grammar line 1, column 14: the literal opened at column 10 is not closed");
  EXPECT_EQ(parse_error("root ::= [a-"), "grammar line 1, column 13: the class opened at column 10 is not closed");
  EXPECT_EQ(parse_error("root ::= (\"a\" | \"b\""),
            "grammar line 1, column 20: expected ')' before the end of the grammar");
  EXPECT_EQ(parse_error("root ::= \"\\q\""), "grammar line 1, column 13: unknown escape '\\q'");
  EXPECT_EQ(parse_error("root ::= [z-a]"),
            "grammar line 1, column 14: the range ends (U+0061) below its start (U+007A)");
  EXPECT_EQ(parse_error("root ::= \"a\"{3,2}"), "grammar line 1, column 17: {3,2}: the most is below the least");
  EXPECT_EQ(parse_error("root ::= item\n"), "grammar: rule 'item' is used (line 1, column 10) but never defined");
  EXPECT_EQ(parse_error("root ::= \"a\"\nroot ::= \"b\"\n"),
            "grammar line 2, column 1: rule 'root' is defined twice (first on line 1)");
  EXPECT_EQ(parse_error("answer ::= \"a\"\n"), "grammar: no rule named 'root' (the rule generation starts from)");
  EXPECT_EQ(parse_error("my_rule ::= \"a\""),
            "grammar line 1, column 3: rule names are letters, digits and '-' ('_' is not allowed)");
  EXPECT_EQ(parse_error("root ::= @"),
            "grammar line 1, column 10: expected a literal \"...\", a class [...], '.', a rule name or '(', found '@'");
}

TEST(Grammar, LeftRecursionIsRefused) {
  EXPECT_NE(parse_error("root ::= root \"x\" | \"y\"").find("rule 'root' can begin with itself (root -> root)"),
            std::string::npos);
  EXPECT_NE(parse_error("root ::= a\na ::= b? \"x\" | \"y\"\nb ::= a \"z\"\n")
                .find("rule 'a' can begin with itself (a -> a_1 -> b -> a)"),
            std::string::npos);
  // A repetition of something that can match nothing would loop without consuming text.
  EXPECT_NE(parse_error("root ::= (\"a\"?)*").find("can begin with itself"), std::string::npos);
}

TEST(Grammar, DescribeShowsTheCompiledRules) {
  const Grammar g = parsed("root ::= \"ab\"? [^x-z]\n");
  EXPECT_EQ(g.describe(), "root ::= root_2 [^x-z]\nroot_1 ::= [a] [b]\nroot_2 ::= root_1 |\n");
}

// Optional parts nested thousands deep open a parse stack per level: refused up front, not a step of seconds.
TEST(Grammar, AGrammarWhoseStartOpensTooManyPathsIsRefused) {
  auto nested = compile_grammar("root ::= (\"a\"?){0,9000} \"b\"\n");
  ASSERT_FALSE(nested);
  EXPECT_NE(nested.error().message.find("parse paths"), std::string::npos) << nested.error().message;
  EXPECT_TRUE(compile_grammar("root ::= \"a\"{0,9000} \"b\"\n"));  // one path per step: fine
}

}  // namespace
}  // namespace infertune
