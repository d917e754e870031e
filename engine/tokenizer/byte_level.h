#pragma once
// GPT-2's byte-level alphabet: every byte value has a printable code point standing for it, so that a
// byte-level BPE vocabulary stores arbitrary bytes as ordinary text. Printable Latin-1 bytes ('!'..'~',
// '¡'..'¬', '®'..'ÿ') stand for themselves; the other 68 bytes (controls, space, DEL, NBSP, soft hyphen)
// take U+0100, U+0101, ... in byte order — so the space is 'Ġ' (U+0120) and the newline 'Ċ' (U+010A).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace infertune {

class ByteLevelAlphabet {
 public:
  ByteLevelAlphabet();

  char32_t code_point(uint8_t byte) const { return to_code_point_[byte]; }
  const std::string& utf8(uint8_t byte) const { return to_utf8_[byte]; }  // code_point(byte) as UTF-8
  std::optional<uint8_t> byte(char32_t cp) const;                         // the inverse, when cp is in it

  std::string encode(std::string_view bytes) const;  // each byte -> its code point, as UTF-8
  // Each code point -> its byte; a code point outside the alphabet is copied through as UTF-8.
  std::string decode(std::string_view text) const;

 private:
  std::array<char32_t, 256> to_code_point_{};
  std::array<std::string, 256> to_utf8_;
  std::array<int16_t, 324> to_byte_{};  // [U+0000 .. U+0143] -> byte, -1 when not in the alphabet
};

const ByteLevelAlphabet& byte_level_alphabet();  // built once

}  // namespace infertune
