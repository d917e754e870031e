#pragma once
// The regex pre-tokenizers of byte-level BPE vocabularies, chosen by `tokenizer.ggml.pre`. Each is a
// sequence of patterns; every pattern splits the pieces the previous one produced (matches and the text
// between them are both kept), which is how HF tokenizers' Sequence of Split pre-tokenizers — and
// llama.cpp — cut text into the words that BPE merges within.
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/unicode_regex.h"
#include "kernels/result.h"

namespace infertune {

struct PreTokenizerRules {
  std::vector<std::string> patterns;  // PCRE2 syntax, applied in order
  bool ignore_merges = false;         // a word that is a whole vocab token is not merged (llama3 family)
  bool add_bos = false;               // default of tokenizer.ggml.add_bos_token for this family
};

// The rules for a `tokenizer.ggml.pre` value ("" means absent, which gets llama.cpp's "default").
// Errors for a name no rule covers.
Result<PreTokenizerRules> pre_tokenizer_rules(std::string_view pre);

class PreTokenizer {
 public:
  static Result<PreTokenizer> create(const PreTokenizerRules& rules);  // compiles every pattern once

  // The words of `text`, in order; together they cover the text exactly.
  std::vector<TextSpan> split(std::string_view text) const;

 private:
  std::vector<UnicodeRegex> regexes_;
};

}  // namespace infertune
