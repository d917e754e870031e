#pragma once
// BERT's text normalization and pre-tokenization (HF BertNormalizer + BertPreTokenizer, as used by
// uncased WordPiece vocabularies): drop NUL, U+FFFD and control characters, strip accents (NFD, then
// drop nonspacing marks), lowercase, split at whitespace, and make every punctuation character (Unicode
// P*, and the ASCII symbols) and every CJK ideograph a word of its own.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/unicode_regex.h"
#include "kernels/result.h"

namespace infertune {

class BertNormalizer {
 public:
  static Result<BertNormalizer> create();

  // The normalized words of `text`, each as UTF-8.
  std::vector<std::string> words(std::string_view text) const;

 private:
  enum class CharClass : uint8_t { Other, Whitespace, Mark, Control, Punctuation };
  CharClass classify(char32_t cp) const;
  char32_t lowercase(char32_t cp) const;

  UnicodeRegex classifier_;  // one capture group per CharClass after Other
  std::array<CharClass, 128> ascii_{};
  // glibc's C.UTF-8 locale (a locale_t, kept opaque to spare users <locale.h>) for towlower_l's Unicode case
  // mapping; null where the C library lacks it, and then only ASCII is lowercased.
  void* lowercase_locale_ = nullptr;
};

}  // namespace infertune
