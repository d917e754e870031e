// The Unicode building blocks of the tokenizers: UTF-8, GPT-2's byte-level alphabet, the PCRE2 splits of
// the pre-tokenizers (expected words follow from the patterns' definitions) and BERT's normalizer.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "engine/tokenizer/accent_table.h"
#include "engine/tokenizer/bert_normalizer.h"
#include "engine/tokenizer/byte_level.h"
#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/unicode_regex.h"
#include "engine/tokenizer/utf8.h"

namespace infertune {
namespace {

using Words = std::vector<std::string>;

TEST(Utf8, DecodesWellFormedSequencesAndReplacesEachBadByte) {
  const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\xA6\x99";  // a é € 🦙
  size_t pos = 0;
  EXPECT_EQ(next_code_point(text, pos), U'a');
  EXPECT_EQ(next_code_point(text, pos), U'\u00E9');
  EXPECT_EQ(next_code_point(text, pos), U'\u20AC');
  EXPECT_EQ(next_code_point(text, pos), U'\U0001F999');
  EXPECT_EQ(pos, text.size());
  for (const std::string bad : {"\xC0\x80", "\xED\xA0\x80", "\xE2\x82", "\x80", "\xF8\x88\x80\x80\x80"}) {
    size_t p = 0;
    EXPECT_EQ(next_code_point(bad, p), kReplacementChar);
    EXPECT_EQ(p, 1u);
  }
  for (char32_t cp : {U'\0', U'\u007F', U'\u0080', U'\u07FF', U'\u0800', U'\uFFFF', U'\U00010000', U'\U0010FFFF'}) {
    const std::string s = utf8_encode(cp);
    size_t p = 0;
    EXPECT_EQ(next_code_point(s, p), cp);
    EXPECT_EQ(p, s.size());
  }
}

TEST(ByteLevelAlphabet, IsABijectionOntoPrintableCodePoints) {
  const ByteLevelAlphabet& a = byte_level_alphabet();
  std::set<char32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const char32_t cp = a.code_point(static_cast<uint8_t>(b));
    EXPECT_TRUE(seen.insert(cp).second) << b;
    EXPECT_GE(cp, 0x21u) << "no space or control stands for byte " << b;
    EXPECT_NE(cp, 0x7Fu);
    EXPECT_EQ(a.byte(cp), b);
  }
  EXPECT_EQ(a.code_point(' '), 0x120u);   // 'Ġ'
  EXPECT_EQ(a.code_point('\n'), 0x10Au);  // 'Ċ'
  EXPECT_EQ(a.code_point('A'), U'A');
  EXPECT_EQ(a.code_point(0xAD), 0x143u);  // the soft hyphen is the last substitute
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  EXPECT_EQ(a.decode(a.encode(all)), all);
  EXPECT_EQ(a.decode("\xE4\xBD\xA0"), "\xE4\xBD\xA0");  // outside the alphabet: copied through
}

Words split(std::string_view pre, std::string_view text) {
  auto rules = pre_tokenizer_rules(pre);
  if (!rules) throw std::runtime_error(rules.error().message);
  auto p = PreTokenizer::create(*rules);
  if (!p) throw std::runtime_error(p.error().message);
  Words words;
  for (const TextSpan& s : p->split(text)) words.emplace_back(text.substr(s.offset, s.length));
  return words;
}

TEST(PreTokenizer, Gpt2SplitsContractionsLettersDigitsAndSpaces) {
  EXPECT_EQ(split("gpt-2", "Hello world's 123  x\n"), (Words{"Hello", " world", "'s", " 123", " ", " x", "\n"}));
  EXPECT_EQ(split("gpt-2", "caf\xC3\xA9 \xD0\xBC\xD0\xB8\xD1\x80!!"),  // Unicode letters are \p{L}
            (Words{"caf\xC3\xA9", " \xD0\xBC\xD0\xB8\xD1\x80", "!!"}));
  EXPECT_EQ(split("gpt-2", ""), Words{});
}

TEST(PreTokenizer, Llama3GroupsDigitsByThreeAndKeepsNewlinesWithSymbols) {
  EXPECT_EQ(split("llama-bpe", "12345 abc"), (Words{"123", "45", " abc"}));
  EXPECT_EQ(split("llama-bpe", "I'M ok.\n\nBye"), (Words{"I", "'M", " ok", ".\n\n", "Bye"}));
  EXPECT_EQ(split("qwen2", "2024"), (Words{"2", "0", "2", "4"}));
}

TEST(PreTokenizer, Gpt4oSplitsAtCaseChangesAndKeepsContractions) {
  EXPECT_EQ(split("gpt-4o", "HelloWORLDWide I'M 12345 a/b\n"),
            (Words{"Hello", "WORLDWide", " I'M", " ", "123", "45", " a", "/b", "\n"}));
  // Unicode's cases, not only ASCII's: a lower-case Greek run then an upper-case one are two words.
  EXPECT_EQ(split("gpt-4o", "\xCE\xB1\xCE\xB2\xCE\x93\xCE\x94"), (Words{"\xCE\xB1\xCE\xB2", "\xCE\x93\xCE\x94"}));
  EXPECT_EQ(split("llama4", "x12"), (Words{"x", "12"}));
}

TEST(PreTokenizer, SequencesApplyEachPatternToThePiecesOfThePrevious) {
  EXPECT_EQ(split("starcoder", "x12 y"), (Words{"x", "1", "2", " y"}));
  EXPECT_EQ(split("falcon", "a+b 1234567"), (Words{"a", "+", "b", " ", "123", "456", "7"}));
  EXPECT_EQ(split("deepseek-coder", "ab,c\n12"), (Words{"ab", ",", "c", "\n", "1", "2"}));
  // The whole text is covered, invalid UTF-8 included.
  const std::string bad = "a\xFF\xFE b";
  std::string joined;
  for (const std::string& w : split("gpt-2", bad)) joined += w;
  EXPECT_EQ(joined, bad);
}

TEST(UnicodeRegex, ABadPatternIsAnError) {
  auto r = UnicodeRegex::compile("[z-a]");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("regex '[z-a]'"), std::string::npos) << r.error().message;
}

TEST(AccentTable, MapsPrecomposedLettersToTheirBase) {
  EXPECT_EQ(strip_accent(U'\u00C4'), U'A');       // Ä
  EXPECT_EQ(strip_accent(U'\u00F1'), U'n');       // ñ
  EXPECT_EQ(strip_accent(U'\u1EED'), U'u');       // ử (two marks)
  EXPECT_EQ(strip_accent(U'\u0419'), U'\u0418');  // Й -> И
  EXPECT_EQ(strip_accent(U'\u00C6'), U'\u00C6');  // Æ has no decomposition
  EXPECT_EQ(strip_accent(U'a'), U'a');
  EXPECT_EQ(strip_accent(U'\uAC00'), U'\uAC00');  // Hangul stays
}

TEST(BertNormalizer, LowercasesStripsAccentsAndIsolatesPunctuation) {
  auto n = BertNormalizer::create();
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(n->words("H\xC3\xA9llo, WORLD!"), (Words{"hello", ",", "world", "!"}));
  EXPECT_EQ(n->words("C\xE1\xBB\xAD"
                     "a Vi\xE1\xBB\x87t"),
            (Words{"cua", "viet"}));
  EXPECT_EQ(n->words("e\xCC\x81t\xC3\xA9"), (Words{"ete"}));             // a separate combining mark
  EXPECT_EQ(n->words("\xD0\x91\xCE\xA3"), (Words{"\xD0\xB1\xCF\x83"}));  // Б Σ -> б σ
  EXPECT_EQ(n->words("ab\x01"
                     "c\xE2\x80\x8D"
                     "d"),
            (Words{"abcd"}));                                            // controls and ZWJ dropped
  EXPECT_EQ(n->words("$5+3=8"), (Words{"$", "5", "+", "3", "=", "8"}));  // ASCII symbols isolated
  EXPECT_EQ(n->words("\xE4\xB8\xAD\xE6\x96\x87x"), (Words{"\xE4\xB8\xAD", "\xE6\x96\x87", "x"}));  // 中文
  EXPECT_EQ(n->words(" \t\n "), Words{});
  EXPECT_EQ(n->words("a\xC2\xA0"
                     "b\xE3\x80\x80"
                     "c"),
            (Words{"a", "b", "c"}));  // NBSP, ideographic space
}

}  // namespace
}  // namespace infertune
