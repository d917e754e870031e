#include "engine/tokenizer/unicode_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace infertune {
namespace {

struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};
using MatchData = std::unique_ptr<pcre2_match_data, MatchDataDeleter>;

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  const int n = pcre2_get_error_message(code, buffer, sizeof buffer);
  return n < 0 ? "unknown PCRE2 error " + std::to_string(code) : std::string(reinterpret_cast<char*>(buffer));
}

}  // namespace

Result<UnicodeRegex> UnicodeRegex::compile(std::string_view pattern) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  const uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &error_code,
                                   &error_offset, nullptr);
  if (code == nullptr) {
    return fail("regex '{}': {} at offset {}", pattern, pcre2_message(error_code), error_offset);
  }
  // JIT is an optimisation only: when PCRE2 was built without it, the interpreter gives the same matches.
  (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  UnicodeRegex regex;
  regex.code_ = std::shared_ptr<pcre2_code>(code, pcre2_code_free);
  regex.pattern_ = std::string(pattern);
  return regex;
}

std::vector<TextSpan> UnicodeRegex::split(std::string_view text, const std::vector<TextSpan>& spans) const {
  std::vector<TextSpan> out;
  out.reserve(spans.size() * 2);
  MatchData data(pcre2_match_data_create_from_pattern(code_.get(), nullptr));
  if (!data) return spans;  // out of memory: leave the text unsplit rather than fail
  for (const TextSpan& span : spans) {
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data() + span.offset);
    size_t start = 0;  // where the next match may begin, relative to the span
    size_t kept = 0;   // end of what has been emitted so far
    while (start < span.length) {
      const int rc = pcre2_match(code_.get(), subject, span.length, start, 0, data.get(), nullptr);
      if (rc < 0) break;  // no (further) match; any error also just ends the splitting of this span
      const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
      const size_t begin = ovector[0], end = ovector[1];
      if (end == begin) {  // an empty match splits nothing; step past one character and retry
        start = begin + 1;
        while (start < span.length && (static_cast<uint8_t>(text[span.offset + start]) & 0xC0) == 0x80) ++start;
        continue;
      }
      if (begin > kept) out.push_back({span.offset + kept, begin - kept});
      out.push_back({span.offset + begin, end - begin});
      kept = start = end;
    }
    if (kept < span.length) out.push_back({span.offset + kept, span.length - kept});
  }
  return out;
}

int UnicodeRegex::match_group_at_start(std::string_view subject) const {
  MatchData data(pcre2_match_data_create_from_pattern(code_.get(), nullptr));
  if (!data) return -1;
  const int rc = pcre2_match(code_.get(), reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0,
                             PCRE2_ANCHORED, data.get(), nullptr);
  if (rc < 0) return -1;
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
  for (int group = 1; group < rc; ++group) {
    if (ovector[2 * group] != PCRE2_UNSET) return group;
  }
  return 0;
}

}  // namespace infertune
