#pragma once
// A compiled PCRE2 pattern in UTF + UCP mode (\p{L}, \s, \w follow Unicode properties), the one place
// the tokenizers touch PCRE2. Compiled (and JIT-compiled when available) once; matching is const and
// thread-safe (each call makes its own match data).
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/result.h"

struct pcre2_real_code_8;  // PCRE2's compiled pattern (pcre2_code with 8-bit code units)

namespace infertune {

// A piece of a text: [offset, offset + length).
struct TextSpan {
  size_t offset = 0;
  size_t length = 0;
  bool operator==(const TextSpan&) const = default;
};

class UnicodeRegex {
 public:
  // Invalid UTF-8 in a subject never fails a match: such bytes simply match nothing (PCRE2_MATCH_INVALID_UTF).
  static Result<UnicodeRegex> compile(std::string_view pattern);

  // Splits every span of `text` at the matches of the pattern, keeping both the matches and the text
  // between them (the "isolated" split of HF tokenizers' Split pre-tokenizer). Each span is matched as a
  // subject of its own, so that anchors and lookarounds stop at its edges.
  std::vector<TextSpan> split(std::string_view text, const std::vector<TextSpan>& spans) const;

  // The number of the first capture group that took part in a match anchored at the start of `subject`,
  // 0 when the match had no group, or -1 when there was no match.
  int match_group_at_start(std::string_view subject) const;

  const std::string& pattern() const { return pattern_; }

 private:
  std::shared_ptr<pcre2_real_code_8> code_;
  std::string pattern_;
};

}  // namespace infertune
