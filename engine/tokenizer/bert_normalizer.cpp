#include "engine/tokenizer/bert_normalizer.h"

#include <locale.h>
#include <wctype.h>

#include "engine/tokenizer/accent_table.h"
#include "engine/tokenizer/utf8.h"

namespace infertune {
namespace {

// Groups in CharClass order: whitespace; nonspacing mark; other (Cc, Cf, Cs, Co, Cn); punctuation, which
// for BERT includes the printable ASCII symbols ($ + < = > ^ ` | ~).
constexpr const char* kClassPattern = R"(\A(?:(\s)|(\p{Mn})|(\p{C})|(\p{P}|(?=[\x{21}-\x{7E}])\p{S})))";

// The CJK ideograph blocks BERT isolates (the ranges of Google's and HF's BERT tokenizers, including HF's
// start of Extension E at U+2B920).
bool is_cjk_ideograph(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// glibc's C.UTF-8 locale carries the Unicode case mappings; it is built in since glibc 2.35. It is made
// once and never freed (it lives as long as the process, like the locale tables themselves).
locale_t utf8_ctype_locale() {
  static const locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  return locale;
}

}  // namespace

Result<BertNormalizer> BertNormalizer::create() {
  auto classifier = UnicodeRegex::compile(kClassPattern);
  if (!classifier) return classifier.error();
  BertNormalizer normalizer;
  normalizer.classifier_ = std::move(*classifier);
  normalizer.lowercase_locale_ = utf8_ctype_locale();
  for (char32_t c = 0; c < 128; ++c) {
    const int group = normalizer.classifier_.match_group_at_start(utf8_encode(c));
    normalizer.ascii_[c] = group > 0 ? static_cast<CharClass>(group) : CharClass::Other;
  }
  return normalizer;
}

BertNormalizer::CharClass BertNormalizer::classify(char32_t cp) const {
  if (cp < 128) return ascii_[cp];
  const int group = classifier_.match_group_at_start(utf8_encode(cp));
  return group > 0 ? static_cast<CharClass>(group) : CharClass::Other;
}

char32_t BertNormalizer::lowercase(char32_t cp) const {
  if (lowercase_locale_ != nullptr) {
    return static_cast<char32_t>(towlower_l(static_cast<wint_t>(cp), static_cast<locale_t>(lowercase_locale_)));
  }
  return cp >= 'A' && cp <= 'Z' ? cp + ('a' - 'A') : cp;
}

std::vector<std::string> BertNormalizer::words(std::string_view text) const {
  std::vector<std::string> words(1);
  const auto end_word = [&] {
    if (!words.back().empty()) words.emplace_back();
  };
  for (size_t pos = 0; pos < text.size();) {
    const char32_t cp = next_code_point(text, pos);
    const CharClass cls = classify(cp);
    if (cls == CharClass::Whitespace) {
      end_word();
      continue;
    }
    if (cp == 0 || cp == kReplacementChar || cls == CharClass::Control || cls == CharClass::Mark) continue;
    const char32_t folded = lowercase(strip_accent(cp));
    if (cls == CharClass::Punctuation || is_cjk_ideograph(cp)) {
      end_word();
      append_utf8(words.back(), folded);
      words.emplace_back();
    } else {
      append_utf8(words.back(), folded);
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

}  // namespace infertune
