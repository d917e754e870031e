#pragma once
// UTF-8 decoding and encoding for the tokenizers. Invalid input never fails: a byte that does not start
// a well-formed sequence decodes to U+FFFD and consumes one byte, as the WHATWG decoder does.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace infertune {

inline constexpr char32_t kReplacementChar = 0xFFFD;

// Bytes of the sequence that `lead` starts (1 for a continuation or invalid byte, so that any byte
// string splits into "characters" that cover it exactly).
size_t utf8_sequence_length(uint8_t lead);

// Decodes the code point at `pos` and advances `pos` past it (by one byte when it is invalid).
char32_t next_code_point(std::string_view text, size_t& pos);

void append_utf8(std::string& out, char32_t cp);
std::string utf8_encode(char32_t cp);

}  // namespace infertune
